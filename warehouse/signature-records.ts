// The record as tx_by_rid stores it (migrations 090, 110): one JSON array per record, in one
// column, so a point read decodes one column of a granule rather than ten (bench/
// RESULTS.md, "A record in one column"). This file is the one reader of that array: the
// point reads parse it here, and SQL that filters on its fields reads them through
// SIGNATURE_RECORDS, which names them as 021's columns were named, with their types.
import { TABLES } from './tables.ts';

/** A record as the lookups answer it: TX_COLUMNS' names and types (64-bit numbers as text). */
export interface SignatureRecordRow {
  signature: string;
  instruction_index: number;
  slot: string;
  block_time: number;
  program_id: string;
  protocol_name: string;
  instruction_type: string;
  fee: string;
  compute_units: number;
  accounts_count: number;
  success: boolean;
}

/** The array's fields in order, with the type the engine reads each as (migration 090 writes them). */
const FIELDS = [
  ['signature', 'String'],
  ['instruction_index', 'UInt16'],
  ['slot', 'String'],
  ['block_time', 'UInt32'],
  ['program_id', 'String'],
  ['protocol_name', 'String'],
  ['instruction_type', 'String'],
  ['fee', 'String'],
  ['compute_units', 'UInt32'],
  ['accounts_count', 'UInt16'],
  ['success', 'Bool'],
] as const;

/** How each field becomes the column 021 had (slot and fee stored as text, block_time as seconds). */
const AS_COLUMN: Partial<Record<(typeof FIELDS)[number][0], (e: string) => string>> = {
  slot: (e) => `toUInt64(${e})`,
  block_time: (e) => `toDateTime(${e}, 'UTC')`,
  fee: (e) => `toUInt64(${e})`,
};

/**
 * The records of the signatures bound as `{sigs:Array(String)}`, with the record's fields as
 * columns (021's names and types) beside sig_key and rid: `FROM ${SIGNATURE_RECORDS} WHERE
 * ...`. Every statement reading it binds `sigs`: the records are found through the index
 * (tx_rid_by_sig: signature hash → rid, then tx_by_rid by rid, migration 110), so only the
 * granules of those keys are decoded. sig_key is the record's own signature's hash: the
 * records of an id that two transactions share (docs/ingest-record-id.md) come along, and
 * a reader's `sig_key IN` or `signature IN` keeps only those asked.
 *
 * Decoded by the engine's other JSON parser (allow_simdjson = 0): a record whose
 * instruction type holds bytes that are not UTF-8 (stored as they came before the ingest
 * pipeline re-serialised such lines) is refused whole by simdjson, every field read as
 * empty, so a signature filter missed it and de-duplication stored it again. The other
 * parser keeps the bytes, as the base table holds them. It decodes the few rows the key
 * chose, not the table.
 */
export const SIGNATURE_RECORDS = decodedRecords(
  `${TABLES.txByRid} WHERE rid IN (SELECT rid FROM ${TABLES.txRidBySig} WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)}))))`,
  ['rid'],
);

/** The records of `source` (a table with 090's `record` column, and its conditions), decoded as SIGNATURE_RECORDS decodes them, with `keep`'s columns. */
export function decodedRecords(source: string, keep: readonly string[] = []): string {
  const fields = FIELDS.map(([name], i) => `${(AS_COLUMN[name] ?? ((e: string) => e))(`rec.${i + 1}`)} AS ${name}`);
  return `(SELECT cityHash64(signature) AS sig_key, ${keep.map((c) => `${c}, `).join('')}JSONExtract(record, 'Tuple(${FIELDS.map(([, t]) => t).join(', ')})') AS rec, ${fields.join(', ')}
  FROM ${source} SETTINGS allow_simdjson = 0)`;
}

const at = (name: (typeof FIELDS)[number][0]): number => FIELDS.findIndex(([n]) => n === name) + 1;

/**
 * One field of a stored record as SQL over tx_by_rid's `record`, for statements that
 * read the table itself (a delete, a benchmark's choice of rows by `_part_offset`). toValidUTF8:
 * simdjson refuses a text with bytes that are not UTF-8 (see SIGNATURE_RECORDS), and such
 * statements cannot choose their parser; none of these fields can hold such bytes.
 */
export const signatureRecordField = (name: 'signature' | 'protocol_name' | 'block_time'): string =>
  `${name === 'block_time' ? 'JSONExtractUInt' : 'JSONExtractString'}(toValidUTF8(record), ${at(name)})`;

/** The bucket of a stored record, "protocol#hourUnixSeconds", as view repair names buckets (warehouse/view-repair.ts). */
export const SIGNATURE_RECORD_BUCKET = (() => {
  const time = signatureRecordField('block_time');
  return `concat(${signatureRecordField('protocol_name')}, '#', toString(${time} - ${time} % 3600))`;
})();

const NUMBER_FIELDS: ReadonlySet<number> = new Set(FIELDS.flatMap(([, t], i) => (t.startsWith('UInt') ? [i] : [])));
const STRING_FIELDS: ReadonlySet<number> = new Set(FIELDS.flatMap(([, t], i) => (t === 'String' ? [i] : [])));

/** One stored record's array as a row; anything else than the array migration 090 writes is an error. */
export function unpackSignatureRecord(json: string): SignatureRecordRow {
  const a: unknown = JSON.parse(json);
  if (!Array.isArray(a) || a.length !== FIELDS.length) throw new Error('not a stored signature record');
  for (let i = 0; i < FIELDS.length; i++) {
    const v: unknown = a[i];
    const ok = NUMBER_FIELDS.has(i) ? typeof v === 'number' : STRING_FIELDS.has(i) ? typeof v === 'string' : typeof v === 'boolean';
    if (!ok) throw new Error(`not a stored signature record: field ${FIELDS[i]![0]}`);
  }
  return {
    signature: a[0],
    instruction_index: a[1],
    slot: a[2],
    block_time: a[3],
    program_id: a[4],
    protocol_name: a[5],
    instruction_type: a[6],
    fee: a[7],
    compute_units: a[8],
    accounts_count: a[9],
    success: a[10],
  } as SignatureRecordRow;
}
