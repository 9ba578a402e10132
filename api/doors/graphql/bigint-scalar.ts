// The BigInt scalar, defined once: a 64-bit integer taken as a JSON number or as a string of
// decimal digits, and never rounded through a float (lamports and slots run to 2^64-1, past
// the 2^53 a double holds exactly). It parses to its canonical decimal text, which the
// analytics layer binds as a UInt64 (or narrower) parameter as it is: the value reaches the
// engine digit for digit, and JSON-encodes wherever a request is keyed or logged.
//
// What it refuses, as graphql-js's own scalars do (a GraphQLError, so the wire error keeps its
// message and is BAD_USER_INPUT): a non-integer (1.5, true, an object), a string that is not
// a decimal integer ("12.0", "1e3", " 12", "0x10"), a value outside -2^63..2^64-1, and a JSON
// number past 2^53-1 (JSON.parse has already rounded it: such a value travels as a string).
// Whether a field takes negatives, and its own maximum, is the field's rule (its declared
// request: api/catalog/open-questions.ts, a whole number from 0 to its column type's largest).
import { GraphQLError, type GraphQLSchema, GraphQLScalarType, Kind, print, type ValueNode } from 'graphql';
import { BIGINT_SCALAR_MAX, BIGINT_SCALAR_MIN, QUOTED_NUMBER_MAX_CHARS } from '../../../core/limits/questions.ts';

export const BIGINT = 'BigInt';

/** A decimal integer string as the scalar takes it: digits with an optional leading minus. */
const DECIMAL = /^-?\d+$/;
/** A GraphQL FloatValue literal: its sign, digits, fraction and exponent. */
const FLOAT_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** Digits of 2^64-1: a whole number written with more (leading zeros aside) is out of range. */
const MAX_DIGITS = BIGINT_SCALAR_MAX.toString().length;

const refused = (message: string, node?: ValueNode): GraphQLError => new GraphQLError(message, node === undefined ? {} : { nodes: node });

const nonInteger = (shown: string, node?: ValueNode): GraphQLError =>
  refused(`BigInt cannot represent a non-integer value: ${shown}; write a whole number, or a string of decimal digits`, node);

/** The canonical text of a whole number given as text, range-checked. */
function inRange(digits: string, shown: string, node?: ValueNode): string {
  const v = BigInt(digits);
  if (v < BIGINT_SCALAR_MIN || v > BIGINT_SCALAR_MAX) {
    throw refused(`BigInt cannot represent ${shown}: it is outside ${BIGINT_SCALAR_MIN} to ${BIGINT_SCALAR_MAX} (-2^63 to 2^64-1)`, node);
  }
  return v.toString();
}

/** Decimal text (a string's value, or an integer literal's digits), checked and made canonical; `shown` as the error names it. */
function fromText(s: string, shown: string, node?: ValueNode): string {
  if (!DECIMAL.test(s)) throw refused(`BigInt cannot represent ${shown}: a string must be a decimal integer (digits, an optional leading "-")`, node);
  // Bounded before it is built: a thousand-digit literal is refused by its length.
  if (s.replace(/^-?0*/, '').length > MAX_DIGITS)
    throw refused(`BigInt cannot represent ${shown}: it is outside ${BIGINT_SCALAR_MIN} to ${BIGINT_SCALAR_MAX} (-2^63 to 2^64-1)`, node);
  return inRange(s, shown, node);
}

const quoted = (s: string): string => JSON.stringify(s.length > QUOTED_NUMBER_MAX_CHARS ? `${s.slice(0, QUOTED_NUMBER_MAX_CHARS)}…` : s);
const fromString = (s: string, node?: ValueNode): string => fromText(s, quoted(s), node);

/** A variable's value: a JSON number (an exact integer, so at most 2^53-1 in size) or a decimal string. */
export function parseBigIntValue(value: unknown): string {
  if (typeof value === 'string') return fromString(value);
  if (typeof value === 'bigint') return inRange(value.toString(), value.toString());
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw nonInteger(typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value)).slice(0, QUOTED_NUMBER_MAX_CHARS));
  if (!Number.isSafeInteger(value)) {
    throw refused(
      `BigInt cannot represent ${value} exactly: a JSON number past 2^53-1 (${Number.MAX_SAFE_INTEGER}) has been rounded; send it as a string of decimal digits`,
    );
  }
  return inRange(String(value), String(value));
}

/**
 * A literal: an integer, a string of decimal digits, or a float literal whose exact value is
 * whole (1.0, 2.5e1), read from its digits rather than through a double.
 */
export function parseBigIntLiteral(node: ValueNode): string {
  if (node.kind === Kind.INT)
    return fromText(node.value, node.value.length > QUOTED_NUMBER_MAX_CHARS ? `${node.value.slice(0, QUOTED_NUMBER_MAX_CHARS)}…` : node.value, node);
  if (node.kind === Kind.STRING) return fromString(node.value, node);
  if (node.kind !== Kind.FLOAT) throw nonInteger(print(node).slice(0, QUOTED_NUMBER_MAX_CHARS), node);
  const m = FLOAT_LITERAL.exec(node.value);
  if (m === null) throw nonInteger(node.value, node);
  const [, sign, whole, fraction = '', exp = '0'] = m;
  // The literal is digits x 10^shift; trailing zeros of the digits lower the shift's need.
  let digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '');
  let shift = Number(exp) - fraction.length;
  while (shift < 0 && digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    shift += 1;
  }
  if (digits === '0') return '0';
  if (shift < 0) throw nonInteger(node.value, node);
  if (digits.length + shift > MAX_DIGITS)
    throw refused(`BigInt cannot represent ${node.value}: it is outside ${BIGINT_SCALAR_MIN} to ${BIGINT_SCALAR_MAX} (-2^63 to 2^64-1)`, node);
  return inRange(`${sign}${digits}${'0'.repeat(shift)}`, node.value, node);
}

/** An answer's value: always its decimal text (no answer field carries one yet). */
export function serializeBigInt(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && DECIMAL.test(value)) return BigInt(value).toString();
  throw new GraphQLError(`BigInt cannot represent ${String(value).slice(0, QUOTED_NUMBER_MAX_CHARS)} as an answer`);
}

/**
 * The scalar's behaviour, given to the SDL's `scalar BigInt` (buildSchema leaves a custom scalar
 * a bare pass-through). A schema whose SDL never names BigInt has nothing to install.
 */
export function installBigInt(schema: GraphQLSchema): void {
  const type = schema.getType(BIGINT);
  if (type === undefined) return;
  if (!(type instanceof GraphQLScalarType)) throw new Error(`the GraphQL schema's ${BIGINT} is not a scalar`);
  type.parseValue = parseBigIntValue;
  type.parseLiteral = parseBigIntLiteral;
  type.serialize = serializeBigInt;
}
