// The ingest record (DESIGN.md section 3) and the check that turns one parsed record into a
// row of the base table or a reason for refusing it: the record steps after parsing
// (ingest/parse-record.ts), answered in the form callers outside the pipeline read (tests,
// the benchmark).
import { refuse, type Refusal } from './rejection.ts';
import type { BaseRow } from '../warehouse/tables.ts';
import type { ProtocolLookup } from './steps/resolve-protocol.ts';
import { checkSteps } from './parse-record.ts';

export { RecordSchema, type IngestRecord } from './steps/validate.ts';
export { protocolLookup, type ProtocolLookup } from './steps/resolve-protocol.ts';
export { normaliseRecord } from './steps/normalise.ts';

export type RecordCheck = { ok: true; row: BaseRow } | Refusal;

/** Validate one parsed record against the schema and the protocol registry; normalise it. */
export function checkRecord(value: unknown, registry: ProtocolLookup): RecordCheck {
  const r = checkSteps(value, registry);
  return r.kind === 'ok' ? { ok: true, row: r.value } : refuse(r.code, r.reason);
}
