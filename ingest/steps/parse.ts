// Step 1, parse: a received record (text, bytes, or a value a caller already parsed) to a
// JSON value. Refuses `empty` (no bytes), `oversized` (over INGEST_MAX_RECORD_BYTES) and `not_json`.
import { deadLetter, ok, type RecordResult } from './step.ts';

export interface Parsed {
  value: unknown;
  /** The record's own JSON text, byte-order mark removed; undefined for a value handed in parsed. */
  json: string | undefined;
}

/** The text of a received record, as the pipeline decodes it. */
export function recordText(value: string | Uint8Array): string {
  return typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}

export function parse(value: string | Uint8Array | object, maxRecordBytes: number): RecordResult<Parsed> {
  if (typeof value !== 'string' && !(value instanceof Uint8Array)) return ok({ value, json: undefined });
  const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
  // A Kafka tombstone or empty message: no record at all, refused as such rather than as bad JSON.
  if (bytes === 0) return deadLetter('empty', 'empty message (no value)');
  if (bytes > maxRecordBytes) return deadLetter('oversized', `record is ${bytes} bytes; the limit is ${maxRecordBytes}`);
  const text = recordText(value);
  // A byte-order mark (Windows tools write one) is encoding, not JSON.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return ok({ value: JSON.parse(json) as unknown, json });
  } catch (err) {
    return deadLetter('not_json', `not valid JSON: ${(err as Error).message}`);
  }
}
