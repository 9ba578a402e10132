// Step 8, insert: the batch's new records into the base table (its views follow), as one
// JSONEachRow buffer.
//
// How records reach the engine (issue 15; figures in bench/RESULTS.md, "Ingest at the
// engine's speed", from `npx tsx bench/ingest-paths.ts`). Three paths were measured on the
// same records into the same migrated store, against the engine's own insert of the same
// NDJSON bytes:
//  - JSONEachRow of the record's original text, built into one buffer (this one): the
//    engine parses exactly the bytes it would parse on its own; building the buffer is a
//    copy. Records that need normalising (a log_messages array, a missing accounts_count,
//    a slot number past 2^53, an object handed in by a caller) are re-serialised from their
//    normalised row, one by one, in the same buffer.
//  - RowBinary built in JS: the engine's parse is cheaper, but encoding ~600 bytes of
//    strings a record in JS costs more than the engine saves (and it needs every record
//    normalised into an object first).
//  - a staged file read by the engine (INSERT ... SELECT FROM file()): the same parse plus a
//    write and a read of the whole batch, and a temporary file to clean up after a crash.
// The engine's JSON reader is stricter than JSON.parse in two ways a valid record can hit:
// a number written 1e3 or 5000.0 and a key given twice. An insert it refuses for its input
// (INSERT_FORMAT_ERRORS) throws FormatRefused; the writer repairs it like any failed insert
// and sends the batch again with every record re-serialised (JSON.stringify writes canonical
// numbers, one key each), so such a record costs speed, never correctness.
import { CLICKHOUSE_INPUT_FORMAT_CODES } from '../../core/errors.ts';
import { BASE_COLUMNS, TABLES } from '../../warehouse/tables.ts';
import { WarehouseError, type Warehouse } from '../../warehouse/warehouse.ts';
import { rowOf, type Accepted } from './records.ts';

/** Engine errors of reading the input itself (CANNOT_PARSE_*, INCORRECT_DATA, ...). */
const INSERT_FORMAT_ERRORS: ReadonlySet<number> = new Set(CLICKHOUSE_INPUT_FORMAT_CODES);
/** The insert's settings: views in parallel; fields the base table does not take (a
 *  producer's extra keys, a `date` it has no say over) are skipped, as the named column
 *  list already skips them when rows are objects. */
const INSERT_SETTINGS = { parallel_view_processing: 1, input_format_skip_unknown_fields: 1 } as const;
const NL = Buffer.from('\n');

/** The engine refused the batch as received for its input: send it again re-serialised. */
export class FormatRefused extends Error {}

/** raw: records that need no normalising go as received (false: every record re-serialised). */
export async function insertRows(wh: Warehouse, rows: readonly Accepted[], raw: boolean): Promise<void> {
  const payload = insertPayload(rows, raw);
  try {
    await wh.insertBytes(TABLES.transactions, payload.bytes, 'JSONEachRow', { columns: BASE_COLUMNS, settings: INSERT_SETTINGS });
  } catch (err) {
    if (payload.raw > 0 && err instanceof WarehouseError && err.clickhouseCode !== undefined && INSERT_FORMAT_ERRORS.has(err.clickhouseCode)) {
      throw new FormatRefused('insert refused for its input', { cause: err });
    }
    throw err;
  }
}

/** One JSONEachRow buffer for the batch: original lines as received, the rest re-serialised. */
function insertPayload(rows: readonly Accepted[], raw: boolean): { bytes: Buffer; raw: number } {
  const parts: Buffer[] = [];
  let text = '';
  let rawCount = 0;
  const flushText = (): void => {
    if (text.length > 0) parts.push(Buffer.from(text));
    text = '';
  };
  for (const a of rows) {
    const line = raw ? a.line : undefined;
    if (line === undefined) {
      text += `${JSON.stringify(rowOf(a))}\n`;
    } else if (typeof line === 'string') {
      rawCount += 1;
      text += `${line}\n`;
    } else {
      // A received buffer (Kafka): copied once, into the batch's buffer, never decoded.
      rawCount += 1;
      flushText();
      parts.push(line, NL);
    }
  }
  flushText();
  return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), raw: rawCount };
}
