// The ingest record (DESIGN.md section 3): its JSON Schema, and the step that turns one
// raw record into a row of the base table or into a reason for rejecting it.
import { refuse, type Refusal } from './rejection.ts';
import { Ajv, type ErrorObject } from 'ajv';

export const BASE58_SIGNATURE = '^[1-9A-HJ-NP-Za-km-z]{64,88}$';
export const BASE58_ADDRESS = '^[1-9A-HJ-NP-Za-km-z]{32,44}$';

export const RECORD_SCHEMA = {
  $id: 'ingest-record',
  type: 'object',
  required: ['signature', 'slot', 'block_time', 'program_id', 'protocol_name', 'instruction_type', 'fee', 'compute_units', 'success'],
  properties: {
    signature: { type: 'string', pattern: BASE58_SIGNATURE },
    instruction_index: { type: 'integer', minimum: 0, maximum: 65535 },
    slot: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', pattern: '^(0|[1-9]\\d{0,19})$' },
      ],
    },
    block_time: { type: 'integer', minimum: 0, maximum: 4294967295 },
    program_id: { type: 'string', pattern: BASE58_ADDRESS },
    protocol_name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' },
    instruction_type: { type: 'string', minLength: 1, maxLength: 128 },
    fee: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    compute_units: { type: 'integer', minimum: 0, maximum: 4294967295 },
    accounts: { type: 'array', maxItems: 1024, items: { type: 'string', pattern: BASE58_ADDRESS } },
    accounts_count: { type: 'integer', minimum: 0, maximum: 65535 },
    success: { type: 'boolean' },
    error_message: { type: 'string' },
    log_messages: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    raw_data: { type: 'string' },
  },
} as const;

export interface IngestRecord {
  signature: string;
  instruction_index?: number;
  slot: number | string;
  block_time: number;
  program_id: string;
  protocol_name: string;
  instruction_type: string;
  fee: number;
  compute_units: number;
  accounts?: string[];
  accounts_count?: number;
  success: boolean;
  error_message?: string;
  log_messages?: string | string[];
  raw_data?: string;
}

/** A row as the base table takes it (derived columns are computed by the table). */
export interface TransactionRow {
  signature: string;
  instruction_index: number;
  slot: string;
  block_time: number;
  program_id: string;
  protocol_name: string;
  instruction_type: string;
  fee: number;
  compute_units: number;
  accounts: string[];
  accounts_count: number;
  success: boolean;
  error_message: string;
  log_messages: string;
  raw_data: string;
}

export const ROW_COLUMNS: readonly (keyof TransactionRow)[] = [
  'signature', 'instruction_index', 'slot', 'block_time', 'program_id', 'protocol_name', 'instruction_type',
  'fee', 'compute_units', 'accounts', 'accounts_count', 'success', 'error_message', 'log_messages', 'raw_data',
];

const ajv = new Ajv({ allErrors: false, strict: true });
const validate = ajv.compile<IngestRecord>(RECORD_SCHEMA);

function describe(err: ErrorObject | undefined): string {
  if (!err) return 'record does not match the schema';
  const field = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (err.keyword === 'required') return `missing required field ${String(err.params.missingProperty)}`;
  if (err.keyword === 'pattern') {
    const what = err.schemaPath.includes('signature') ? 'a Base58 signature of 64-88 characters'
      : err.schemaPath.includes('protocol_name') ? 'a lowercase snake_case protocol name'
      : err.schemaPath.includes('slot') ? 'a non-negative integer' : 'a Base58 address of 32-44 characters';
    return `${field} must be ${what}`;
  }
  if (err.keyword === 'anyOf' && field === 'slot') return 'slot must be a non-negative integer or a decimal string';
  if (err.keyword === 'anyOf' && field === 'log_messages') return 'log_messages must be a string or an array of strings';
  return `${field || 'record'} ${err.message ?? 'is invalid'}`;
}

export type RecordCheck = { ok: true; row: TransactionRow } | Refusal;

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
  const accounts = r.accounts ?? [];
  return {
    ok: true,
    row: {
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
    },
  };
}
