// One received record to a checked row or a refusal: the record steps of the ingest
// pipeline (ingest/steps/: parse, validate, resolve-protocol, normalise) and the sig_key
// hash, in one function that the main thread and the parse workers (ingest/parse-worker.ts)
// both run, so that a record gets the same answer, code and message wherever it was parsed.
// A new record step is added here, once, for both.
import { isUtf8 } from 'node:buffer';
import type { CityHasher } from './city-hash.ts';
import { parse } from './steps/parse.ts';
import { normalise, storesAsReceived } from './steps/normalise.ts';
import { resolveProtocol, type ProtocolLookup } from './steps/resolve-protocol.ts';
import { ok, type RecordResult } from './steps/step.ts';
import { validate, type IngestRecord } from './steps/validate.ts';
import type { BaseRow } from '../warehouse/tables.ts';

export { recordText } from './steps/parse.ts';

export interface Checked {
  row: BaseRow;
  /** The record's own JSON text (byte-order mark removed) stores as the row does: see storesAsReceived. */
  asReceived: boolean;
  /** sig_key = cityHash64(signature), high and low halves. */
  kh: number;
  kl: number;
}

/** What the record steps need: the size limit, the registry, and this thread's hasher. */
export interface RecordContext {
  maxRecordBytes: number;
  known: ProtocolLookup;
  hasher: CityHasher;
}

/** The record steps after parse (validate, resolve-protocol, normalise): a parsed record to its row, or the first refusal. */
export function checkSteps(value: unknown, registry: ProtocolLookup): RecordResult<BaseRow> {
  const valid = validate(value);
  if (valid.kind !== 'ok') return valid;
  const resolved = resolveProtocol(valid.value, registry);
  if (resolved.kind !== 'ok') return resolved;
  return normalise(resolved.value);
}

export function parseRecord(value: string | Uint8Array | object, ctx: RecordContext): RecordResult<Checked> {
  const parsed = parse(value, ctx.maxRecordBytes);
  if (parsed.kind !== 'ok') return parsed;
  const checked = checkSteps(parsed.value.value, ctx.known);
  if (checked.kind !== 'ok') return checked;
  const row = checked.value;
  const { json } = parsed.value;
  ctx.hasher.hash(row.signature);
  // Received bytes that are not UTF-8 were checked as decoded (each bad sequence read as
  // U+FFFD); sent as they came, the engine would store the bad bytes themselves, and the
  // records by signature (one JSON text a record, migration 090) could not be read back.
  const asText = typeof value === 'string' || !(value instanceof Uint8Array) || isUtf8(value);
  return ok({
    row,
    asReceived: json !== undefined && asText && storesAsReceived(parsed.value.value as IngestRecord, json),
    kh: ctx.hasher.high(),
    kl: ctx.hasher.low(),
  });
}
