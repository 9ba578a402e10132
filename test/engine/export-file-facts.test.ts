// The manifest's figures of an export file (rows, bytes, sha256) are taken by our own reader on
// a worker thread (api/services/exports/file-facts.ts), not by the engine: here they are checked
// against the engine's own count of files it wrote and against a hash taken here, on data
// chosen to trip a naive counter (newlines, quotes and commas inside CSV fields, records
// straddling the reader's 4 MiB buffers, Parquet files of many row groups, empty results).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMAT_FILES, type ExportFormat } from '../../api/services/exports/export-config.ts';
import { FileFactsWorker } from '../../api/services/exports/file-facts.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';

const worker = new FileFactsWorker();
const fileFacts = (file: string, format: ExportFormat) => worker.facts(file, format);

const dir = mkdtempSync(path.join(tmpdir(), 'txa-file-facts-'));
let wh: EmbeddedWarehouse;
beforeAll(() => {
  wh = new EmbeddedWarehouse(path.join(dir, 'data'));
});
afterAll(async () => {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
});

// Awkward text in every row: quotes, commas, LF and CRLF inside fields, and long fields so
// that records cross buffer boundaries at every offset.
const AWKWARD = `SELECT number AS n,
  concat('say "hi", ', toString(number), '\n', repeat('x', number % 97), '\r\n"') AS text,
  [concat('a"', toString(number)), 'b,\nc'] AS list,
  repeat('q', 200 + number % 50) AS pad
FROM numbers({rows})`;

async function write(format: ExportFormat, rows: number, settings: Record<string, string | number> = {}): Promise<string> {
  const file = path.join(dir, `f-${format}-${rows}-${Object.keys(settings).length}.${FORMAT_FILES[format].ext}`);
  await wh.exec(`INSERT INTO FUNCTION file('${file}', '${FORMAT_FILES[format].engine}') ${AWKWARD.replace('{rows}', String(rows))}`, {
    settings: { engine_file_truncate_on_insert: 1, ...settings },
  });
  return file;
}

async function engineRows(file: string, format: ExportFormat): Promise<number> {
  // The structure is given: the engine cannot infer it from an empty text file (nor count one).
  const [r] = await wh.query<{ n: string }>(
    `SELECT count() AS n FROM file('${file}', '${FORMAT_FILES[format].engine}', 'n UInt64, text String, list Array(String), pad String')`,
  );
  return Number(r!.n);
}

describe('export file facts', () => {
  for (const format of ['CSV', 'JSONL', 'PARQUET'] as const) {
    for (const rows of [0, 1, 40_000]) {
      it(`${format}, ${rows} rows: rows as the engine counts them, sha256 and size of the bytes`, async () => {
        const file = await write(format, rows, format === 'PARQUET' ? { output_format_parquet_row_group_size: 997 } : {});
        const facts = await fileFacts(file, format);
        const bytes = readFileSync(file);
        expect(facts.rows).toBe(rows);
        expect(facts.rows).toBe(await engineRows(file, format));
        expect(facts.bytes).toBe(bytes.length);
        expect(facts.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      });
    }
  }

  it("CSV records spanning the reader's buffers are counted once", async () => {
    // ~300 B per record x 40,000 rows is 12 MB: three 4 MiB reads, each boundary inside a record.
    const file = await write('CSV', 40_000);
    expect(readFileSync(file).length).toBeGreaterThan(2 * 4 * 2 ** 20);
    expect((await fileFacts(file, 'CSV')).rows).toBe(40_000);
  });

  it('a file that is not Parquet is refused, not counted', async () => {
    const bogus = path.join(dir, 'bogus.parquet');
    writeFileSync(bogus, 'PAR1 this is not a parquet file PAR1');
    await expect(fileFacts(bogus, 'PARQUET')).rejects.toThrow(/Parquet/);
    await expect(fileFacts(path.join(dir, 'missing.csv'), 'CSV')).rejects.toThrow(/ENOENT/);
  });

  it('many files at once all get their own answers', async () => {
    const files = await Promise.all([write('JSONL', 1), write('CSV', 1), write('PARQUET', 1)]);
    const facts = await Promise.all([fileFacts(files[0]!, 'JSONL'), fileFacts(files[1]!, 'CSV'), fileFacts(files[2]!, 'PARQUET')]);
    expect(facts.map((f) => f.rows)).toEqual([1, 1, 1]);
    expect(new Set(facts.map((f) => f.sha256)).size).toBe(3);
  });
});
