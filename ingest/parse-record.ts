// One received record to a checked row or a refusal: the per-record work of the ingest
// pipeline (size limit, JSON.parse, schema, registry, sig_key hash), in one function that
// the main thread and the parse workers (ingest/parse-worker.ts) both run, so that a
// record gets the same answer, code and message wherever it was parsed.
import { hashHigh, hashInto, hashLow } from './city-hash.ts';
import type { RejectionCode } from './rejection.ts';
import { checkRecord, type IngestRecord, type ProtocolLookup } from './record-schema.ts';
import type { BaseRow } from '../warehouse/tables.ts';

export type Parsed =
  | {
    kind: 'ok';
    row: BaseRow;
    /** The record's own JSON text (byte-order mark removed) stores as the row does: see asReceived. */
    asReceived: boolean;
    /** sig_key = cityHash64(signature), high and low halves. */
    kh: number;
    kl: number;
  }
  | { kind: 'dead'; code: RejectionCode; detail: string };

/** The text of a received record, as the pipeline decodes it. */
export function recordText(value: string | Uint8Array): string {
  return typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}

export function parseRecord(value: string | Uint8Array | object, maxRecordBytes: number, known: ProtocolLookup): Parsed {
  let parsed: unknown = value;
  let json: string | undefined;
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
    if (bytes > maxRecordBytes) return { kind: 'dead', code: 'oversized', detail: `record is ${bytes} bytes; the limit is ${maxRecordBytes}` };
    const text = recordText(value);
    // A byte-order mark (Windows tools write one) is encoding, not JSON.
    json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    try {
      parsed = JSON.parse(json);
    } catch (err) {
      return { kind: 'dead', code: 'not_json', detail: `not valid JSON: ${(err as Error).message}` };
    }
  }
  const check = checkRecord(parsed, known);
  if (!check.ok) return { kind: 'dead', code: check.code, detail: check.detail };
  hashInto(check.row.signature);
  return { kind: 'ok', row: check.row, asReceived: json !== undefined && asReceived(parsed as IngestRecord, json), kh: hashHigh(), kl: hashLow() };
}

/**
 * Whether the engine, reading the record's own JSON into the base table's columns, stores
 * what the normalised row holds. What the engine cannot do by itself: join a log_messages
 * array, count accounts for a missing accounts_count, and keep a slot number past 2^53 as
 * JSON.parse rounded it (the row path stores that rounded value; a decimal-string slot it
 * reads exactly as the row path does). Absent optional fields take the columns' defaults
 * (0, '', []), which are the row's. A record spread over several lines is re-serialised,
 * since each record must be one line of the buffer.
 */
function asReceived(r: IngestRecord, json: string): boolean {
  return r.accounts_count !== undefined
    && !Array.isArray(r.log_messages)
    && (typeof r.slot !== 'number' || r.slot <= Number.MAX_SAFE_INTEGER)
    && json.indexOf('\n') < 0;
}
