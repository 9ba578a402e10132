// What flows between the ingest steps: a record as received (RawRecord), and a record that
// passed the record steps (Accepted), on its way through the writer's steps.
import type { BaseRow } from '../../warehouse/tables.ts';
import type { Position } from '../rejection.ts';
import type { DropCode } from './step.ts';
import { normaliseRecord } from './normalise.ts';
import type { IngestRecord } from './validate.ts';

export interface RawRecord {
  /** The record as received: bytes/text to parse, or an already-parsed value. */
  value: string | Uint8Array | object;
  /** Where it came from, for error reports and the dead-letter sink. */
  position: Position;
}

/**
 * A valid record: what de-duplication, routing and the journal read (identity, protocol,
 * block time), its normalised row, and, when the record as received needs no normalising,
 * its original JSON text, which goes to the engine as it came. A record parsed on a worker
 * comes without its row when it has a line: rowOf rebuilds the row from the line if a
 * re-serialised insert ever needs it (the same text parses to the same row).
 */
export interface Accepted {
  signature: string;
  instruction_index: number;
  protocol_name: string;
  block_time: number;
  row?: BaseRow;
  line?: string | Buffer;
  /** sig_key = cityHash64(signature), high and low halves: what de-duplication's ingest_keys lookup takes. */
  kh: number;
  kl: number;
  /** Set when a writer step dropped it (its call counts it as a duplicate). */
  dropped?: DropCode;
}

/** The record's own text without a byte-order mark: the received buffer itself when there is one. */
export function rawLine(value: string | Uint8Array): string | Buffer {
  if (typeof value === 'string') return value.charCodeAt(0) === 0xfeff ? value.slice(1) : value;
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b;
}

/** The normalised row; rebuilt from the line for a record a worker parsed (same text, same row). */
export function rowOf(a: Accepted): BaseRow {
  a.row ??= normaliseRecord(JSON.parse(typeof a.line === 'string' ? a.line : a.line!.toString('utf8')) as IngestRecord);
  return a.row;
}
