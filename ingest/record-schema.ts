// The ingest record (DESIGN.md section 3): its JSON Schema, and the step that turns one
// raw record into a row of the base table or into a reason for rejecting it.
import { refuse, type Refusal } from './rejection.ts';
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { MAX_BLOCK_TIME, MIN_BLOCK_TIME } from '../core/limits.ts';
import { Address, InstructionType, ProtocolName, ruleOfPattern, Signature } from '../core/vocabulary/primitives.ts';
import type { BaseRow } from '../warehouse/tables.ts';

/**
 * The record as producers send it (DESIGN.md section 3), built from the vocabulary's
 * primitives; IngestRecord is derived from it. snake_case because producers write the
 * column names of the base table.
 */
export const RecordSchema = Type.Object({
  signature: Signature,
  instruction_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  slot: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^(0|[1-9]\\d{0,19})$' })]),
  block_time: Type.Integer({ minimum: MIN_BLOCK_TIME, maximum: MAX_BLOCK_TIME }),
  program_id: Address,
  protocol_name: ProtocolName,
  instruction_type: InstructionType,
  fee: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  compute_units: Type.Integer({ minimum: 0, maximum: 4294967295 }),
  accounts: Type.Optional(Type.Array(Address, { maxItems: 1024 })),
  accounts_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  success: Type.Boolean(),
  error_message: Type.Optional(Type.String()),
  log_messages: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  raw_data: Type.Optional(Type.String()),
}, { $id: 'ingest-record' });
export type IngestRecord = Static<typeof RecordSchema>;

const ajv = new Ajv({ allErrors: false, strict: true });
const validate = ajv.compile<IngestRecord>(RecordSchema);

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

export type RecordCheck = { ok: true; row: BaseRow } | Refusal;

/** The protocol registry as the record check needs it (DESIGN.md section 5: the registry
 *  maps program id -> protocol name), every protocol included, active or not. */
export interface ProtocolLookup {
  /** protocol name -> its program id */
  programOf: ReadonlyMap<string, string>;
  /** program id -> protocol name */
  protocolOf: ReadonlyMap<string, string>;
}

export function protocolLookup(entries: Iterable<{ protocolName: string; programId: string }>): ProtocolLookup {
  const programOf = new Map<string, string>();
  const protocolOf = new Map<string, string>();
  for (const e of entries) {
    programOf.set(e.protocolName, e.programId);
    protocolOf.set(e.programId, e.protocolName);
  }
  return { programOf, protocolOf };
}

/** Validate one parsed record against the schema and the protocol registry; normalise it. */
export function checkRecord(value: unknown, registry: ProtocolLookup): RecordCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refuse('not_object', 'record must be a JSON object');
  }
  // A field with alternatives (slot, log_messages) fails each branch and then the anyOf
  // itself; the anyOf error names what is allowed, the first branch's error only half.
  if (!validate(value)) return refuse('schema', describe(validate.errors?.find((e) => e.keyword === 'anyOf') ?? validate.errors?.[0]));
  const r = value;
  const program = registry.programOf.get(r.protocol_name);
  if (program === undefined) {
    return refuse('unknown_protocol', `unknown protocol_name "${r.protocol_name}"`);
  }
  // The program id decides the protocol: a record naming one protocol with another's
  // program (or with a program the registry does not know) would be counted under the
  // wrong protocol in every aggregate, so it is refused rather than trusted.
  const owner = registry.protocolOf.get(r.program_id);
  if (owner === undefined) {
    return refuse('program_unregistered', `program_id "${r.program_id}" is not in the protocol registry; the program of ${r.protocol_name} is ${program}`);
  }
  if (owner !== r.protocol_name) {
    return refuse('program_mismatch', `program_id "${r.program_id}" is the program of ${owner}, not of ${r.protocol_name}`);
  }
  if (r.accounts === undefined && r.accounts_count === undefined) {
    return refuse('accounts_count_missing', 'accounts_count is required when accounts is absent');
  }
  const slot = String(r.slot);
  if (slot.length === 20 && slot > '18446744073709551615') return refuse('slot_out_of_range', 'slot is out of range');
  return { ok: true, row: normaliseRecord(r) };
}

/** The base row of a record that passed checkRecord: defaults filled, slot as text, log
 *  lines joined. Pure: the same record always gives the same row (ingest/parse-pool.ts
 *  relies on it to rebuild a row on the main thread from the record's text). */
export function normaliseRecord(r: IngestRecord): BaseRow {
  const slot = String(r.slot);
  const accounts = r.accounts ?? [];
  return {
    signature: r.signature,
    instruction_index: r.instruction_index ?? 0,
    slot,
    block_time: r.block_time,
    program_id: r.program_id,
    protocol_name: r.protocol_name,
    instruction_type: r.instruction_type,
    fee: r.fee,
    compute_units: r.compute_units,
    accounts,
    accounts_count: r.accounts_count ?? accounts.length,
    success: r.success,
    error_message: r.error_message ?? '',
    log_messages: Array.isArray(r.log_messages) ? r.log_messages.join('\n') : (r.log_messages ?? ''),
    raw_data: r.raw_data ?? '',
  };
}
