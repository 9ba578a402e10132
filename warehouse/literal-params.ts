// A statement's `{name:Type}` parameters written into its text as literals, for the embedded
// transport: chDB's Node binding runs every statement with bound parameters one after another,
// process-wide, whatever its session, so a read that must run beside others (an address page)
// cannot be bound there (bench/RESULTS.md, "Parameter-free address pages"). The literals are
// safe by construction, not by trusting the caller's checks: a string is written as the hex of
// its UTF-8 bytes (`unhex('4A6F')`: only 0-9 and A-F reach the text), a whole number as the
// decimal digits of a value range-checked against its type, and every type not in the list
// below, or a value not of its type, throws (fail closed). Each literal is cast to the
// parameter's type, so the statement types it as the bound form did and the engine folds it
// to a constant before index analysis (a key condition over `sipHash128(unhex(…))` still picks
// its granules). The statement's own text must not write a `{name:Type}` inside a string literal.
import type { QueryParams } from './warehouse.ts';

/** The unsigned types the renderer writes, their width in bits read from the name. */
const UNSIGNED = /^UInt(8|16|32|64)$/;

const DIGITS = /^[0-9]+$/;

/** A parameter placeholder: `{name:Type}`, spaces allowed around either part, as the engine reads it. */
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]*?)\s*\}/g;

/** A string as the hex of its UTF-8 bytes (upper case): nothing but [0-9A-F] inside the quotes. */
function stringLiteral(v: unknown, name: string): string {
  if (typeof v !== 'string') throw new TypeError(`parameter ${name}: not a string`);
  return `unhex('${Buffer.from(v, 'utf8').toString('hex').toUpperCase()}')`;
}

/** An array of an unsigned type: its items are written as bare checked digits. */
const UNSIGNED_ARRAY = /^Array\(UInt(8|16|32|64)\)$/;

/** A whole number of an unsigned type, from a JavaScript integer, a bigint or decimal digits, within the type's range. */
function unsignedLiteral(v: unknown, type: string, bits: number, name: string): string {
  return `CAST('${unsignedDigits(v, type, bits, name)}' AS ${type})`;
}

/** The decimal digits of a whole number within an unsigned type's range; throws otherwise. */
function unsignedDigits(v: unknown, type: string, bits: number, name: string): string {
  let n: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === 'bigint') n = v;
  else if (typeof v === 'string' && DIGITS.test(v)) n = BigInt(v);
  else throw new TypeError(`parameter ${name}: not a whole number of ${type}`);
  if (n < 0n || n >= 1n << BigInt(bits)) throw new RangeError(`parameter ${name}: out of the range of ${type}`);
  return n.toString();
}

/** The literal of one parameter of `type`; throws for a type not listed here. */
function literalOf(type: string, v: unknown, name: string): string {
  if (type === 'String') return stringLiteral(v, name);
  if (type === 'Array(String)') {
    if (!Array.isArray(v)) throw new TypeError(`parameter ${name}: not an array`);
    return `CAST([${v.map((x) => stringLiteral(x, name)).join(', ')}] AS Array(String))`;
  }
  const items = UNSIGNED_ARRAY.exec(type);
  if (items !== null) {
    if (!Array.isArray(v)) throw new TypeError(`parameter ${name}: not an array`);
    // Bare digits inside the array (each range-checked): an ingest batch's dropped lines run to thousands.
    const bits = Number(items[1]);
    return `CAST([${v.map((x) => unsignedDigits(x, `UInt${bits}`, bits, name)).join(', ')}] AS ${type})`;
  }
  const unsigned = UNSIGNED.exec(type);
  if (unsigned !== null) return unsignedLiteral(v, type, Number(unsigned[1]), name);
  throw new TypeError(`parameter ${name}: type ${type} is not written as a literal`);
}

/**
 * `sql` with each `{name:Type}` replaced by the literal of `params[name]`; throws when a
 * placeholder has no value or a type (or value) the renderer does not write.
 */
export function withLiteralParams(sql: string, params: QueryParams): string {
  return sql.replace(PLACEHOLDER, (_whole, name: string, type: string) => {
    if (!Object.hasOwn(params, name) || params[name] === undefined) throw new TypeError(`parameter ${name}: no value`);
    return literalOf(type, params[name], name);
  });
}
