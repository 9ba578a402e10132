// Step 2, validate: a JSON value against the record schema (DESIGN.md section 3). Refuses
// `not_object` and `schema` (the message names the first field that fails).
import { INGEST_MAX_ACCOUNTS } from '../../core/limits/ingest.ts';
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { MAX_BLOCK_TIME, MIN_BLOCK_TIME } from '../../core/limits/questions.ts';
import { MAX_INSTRUCTION_INDEX, MAX_TRANSACTION_INDEX } from '../../core/limits/record-id.ts';
import { Address, InstructionType, ProtocolName, ruleOfPattern, Signature } from '../../core/vocabulary/primitives.ts';
import { deadLetter, ok, type RecordResult } from './step.ts';

/**
 * The record as producers send it (DESIGN.md section 3), built from the vocabulary's
 * primitives; IngestRecord is derived from it. snake_case because producers write the
 * column names of the base table.
 */
export const RecordSchema = Type.Object(
  {
    signature: Signature,
    // Both are parts of the record id (migration 110): their widths are its limits.
    instruction_index: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INSTRUCTION_INDEX })),
    transaction_index: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TRANSACTION_INDEX })),
    slot: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^(0|[1-9]\\d{0,19})$' })]),
    block_time: Type.Integer({ minimum: MIN_BLOCK_TIME, maximum: MAX_BLOCK_TIME }),
    program_id: Address,
    protocol_name: ProtocolName,
    instruction_type: InstructionType,
    fee: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    compute_units: Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 }),
    accounts: Type.Optional(Type.Array(Address, { maxItems: INGEST_MAX_ACCOUNTS })),
    accounts_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 16 - 1 })),
    success: Type.Boolean(),
    error_message: Type.Optional(Type.String()),
    log_messages: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    raw_data: Type.Optional(Type.String()),
  },
  { $id: 'ingest-record' },
);
export type IngestRecord = Static<typeof RecordSchema>;

// Compiled once: the validator is a pure function of the schema.
const validator = new Ajv({ allErrors: false, strict: true }).compile<IngestRecord>(RecordSchema);

function describe(err: ErrorObject | undefined): string {
  if (!err) return 'record does not match the schema';
  const field = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (err.keyword === 'required') return `missing required field ${String(err.params.missingProperty)}`;
  if (err.keyword === 'pattern') {
    const what = ruleOfPattern(err.params.pattern) ?? (err.schemaPath.includes('slot') ? 'a non-negative integer' : 'valid');
    return `${field} must be ${what}`;
  }
  if (err.keyword === 'anyOf' && field === 'slot') return 'slot must be a non-negative integer or a decimal string';
  if (err.keyword === 'anyOf' && field === 'log_messages') return 'log_messages must be a string or an array of strings';
  return `${field || 'record'} ${err.message ?? 'is invalid'}`;
}

/** An unpaired UTF-16 surrogate: JSON can write one (\ud800), UTF-8 cannot hold it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Any surrogate: a cheap first test (almost no record has one). */
const SURROGATE = /[\uD800-\uDFFF]/;
const lone = (s: string): boolean => SURROGATE.test(s) && LONE_SURROGATE.test(s);
/** A key as the message names it: its lone surrogates as U+FFFD (the message is stored too). */
const shownKey = (k: string): string => k.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');

/**
 * The path of the first key or string anywhere in the record holding a lone surrogate, or
 * undefined. The engine refuses such an escape in any field, skipped ones too
 * (CANNOT_PARSE_ESCAPE_SEQUENCE), and with it the whole batch: refused here, alone.
 * Iterative, as an unknown field may nest deep.
 */
function loneSurrogateAt(record: object): string | undefined {
  // Each entry: a value and how to name it (its parent's entry and its key), the path built only on a hit.
  type Entry = { v: unknown; parent: Entry | undefined; key: string };
  const named = (e: Entry): string => (e.parent === undefined || e.parent.parent === undefined ? e.key : `${named(e.parent)}.${e.key}`);
  const stack: Entry[] = [{ v: record, parent: undefined, key: '' }];
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    const v = e.v;
    if (typeof v === 'string') {
      if (lone(v)) return named(e);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], parent: e, key: String(i) });
    } else if (typeof v === 'object' && v !== null) {
      for (const k of Object.keys(v)) {
        if (lone(k)) return named({ v: undefined, parent: e, key: shownKey(k) });
        stack.push({ v: (v as Record<string, unknown>)[k], parent: e, key: k });
      }
    }
  }
  return undefined;
}

export function validate(value: unknown): RecordResult<IngestRecord> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return deadLetter('not_object', 'record must be a JSON object');
  // A field with alternatives (slot, log_messages) fails each branch and then the anyOf
  // itself; the anyOf error names what is allowed, the first branch's error only half.
  if (!validator(value)) return deadLetter('schema', describe(validator.errors?.find((e) => e.keyword === 'anyOf') ?? validator.errors?.[0]));
  const surrogateAt = loneSurrogateAt(value);
  if (surrogateAt !== undefined)
    return deadLetter('schema', `${surrogateAt} must be well-formed Unicode text: a lone surrogate (\\ud800-\\udfff without its pair) cannot be stored`);
  return ok(value);
}
