// Files every loader reads (issue 24): each format's export, downloaded as a user would, read
// by pyarrow and Hugging Face `datasets` from the project's .venv (scripts/python/venv.sh,
// pinned versions), an empty (0-row) export of each format included. The loaders see the
// splits and rows the manifest states, the columns the schema states, timestamps as UTC
// instants (CSV and JSONL write ISO 8601 with Z), CSV's accounts as a JSON array equal to the
// stored list; the manifest's watermark is ISO 8601. Also a normalised column's mean and
// deviation, and a stratified sample's shares, as the Python side computes them. And a CSV of
// multi-line log messages (line feeds, CRLF, lone CR, backslashes) over pyarrow's 1 MiB block,
// which pyarrow's defaults could not read (issue 38): every default reader reads it row for
// row, and the dataset card's rule gives back every stored value.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { b58, demoRecords, ingest, PROGRAM_OF } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
let t: Awaited<ReturnType<typeof startApp>>;
let a: Record<string, string>;
let python: string;
const scratch = mkdtempSync(path.join(tmpdir(), 'txa-export-loaders-'));
const RANGE = { start: '2024-12-29', end: '2024-12-31' };
const FORMATS = ['PARQUET', 'CSV', 'JSONL'] as const;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

type Job = { id: string; status: string; error: string | null; files: { name: string; split: string; rows: number }[] };
type Seen = {
  rows: number;
  features: Record<string, string>;
  first: Record<string, unknown> | null;
  feeMean: number | null;
  feeStd: number | null;
  protocols: Record<string, number>;
};
type Decoded = Record<string, Record<string, string>>;
type Report = Record<
  string,
  {
    pyarrow: Record<string, { rows: number; columns: string[]; types: Record<string, string>; first: Record<string, unknown> | null }>;
    datasets: Record<string, Seen> | null;
    streaming: Record<string, Seen> | null;
    errors: Record<string, string>;
    /** Per file, per reader (pyarrow, pandas, csv): the text columns by signature, decoded by the card's rule. */
    text: Record<string, Record<'pyarrow' | 'pandas' | 'csv', { rows?: number; decoded: Decoded }>>;
  }
>;

const exportsRead: { name: string; dir: string; format: string; empty: boolean; job: Job; manifest: any; text?: string[] }[] = [];
/** A day of its own for the multi-line records (the demo records end on 2024-12-31). */
const MULTILINE_DAY = '2025-01-05';
const MULTILINE_TEXT = ['log_messages', 'error_message'];

/**
 * 3000 pump.fun records in one hour (so one CSV file of about 3 MB: pyarrow's 1 MiB blocks end
 * inside its values), each with a log of several lines: line feeds, CRLF or a lone CR between
 * lines, quotes, commas and backslashes inside them, a line ending in a backslash, the two
 * characters backslash-n as text; some sent as an array of lines, some failed with a two-line error.
 */
function multilineRecords(): IngestRecord[] {
  const program = PROGRAM_OF.pump_fun!;
  const start = Date.parse(`${MULTILINE_DAY}T10:00:00Z`) / 1000;
  return Array.from({ length: 3000 }, (_, i) => {
    const lines = [
      `Program ${program} invoke [1]`,
      'Program log: Instruction: Buy',
      `Program log: route "${i}", through C:\\pool\\${i % 97} and back`,
      ...[1, 2, 3].map((k) => `Program data: ${b58(`data-${i}-${k}`, 200)}`),
      ...(i % 13 === 0 ? ['Program log: ends with a backslash \\'] : []),
      ...(i % 17 === 0 ? ['Program log: a literal \\n stays two characters'] : []),
      `Program ${program} consumed ${40_000 + i} of 200000 compute units`,
      `Program ${program} ${i % 3 === 0 ? 'failed: custom program error: 0x1771' : 'success'}`,
    ];
    const sep = i % 7 === 0 ? '\r\n' : i % 11 === 0 ? '\r' : '\n';
    return {
      signature: b58(`multiline-${i}`, 88),
      instruction_index: 0,
      slot: 310_000_000 + i,
      block_time: start + i,
      program_id: program,
      protocol_name: 'pump_fun',
      instruction_type: 'buy',
      fee: 5000 + i,
      compute_units: 40_000 + i,
      accounts: [b58(`multiline-account-${i % 50}`, 44)],
      success: i % 3 !== 0,
      ...(i % 3 === 0 ? { error_message: 'custom program error: 0x1771\nSlippage tolerance exceeded' } : {}),
      log_messages: i % 5 === 0 && sep === '\n' ? lines : lines.join(sep),
    };
  });
}

let report: Report;

async function exportTo(name: string, config: Record<string, unknown>, empty: boolean, text?: string[]): Promise<void> {
  const r = await t.app.inject({ method: 'POST', url: '/v1/exports', headers: { ...a, 'content-type': 'application/json' }, payload: JSON.stringify(config) });
  expect(r.statusCode, r.body).toBe(202);
  let job = r.json<Job>();
  for (let i = 0; i < 1200 && ['QUEUED', 'RUNNING'].includes(job.status); i++) {
    await new Promise((res) => setTimeout(res, 25));
    job = (await t.app.inject({ method: 'GET', url: `/v1/exports/${job.id}`, headers: a })).json<Job>();
  }
  expect(job.status, job.error ?? '').toBe('COMPLETED');
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  for (const f of [...job.files.map((x) => x.name), 'manifest.json', 'README.md']) {
    const d = await t.app.inject({ method: 'GET', url: `/v1/exports/${job.id}/files/${f}`, headers: a });
    expect(d.statusCode).toBe(200);
    writeFileSync(path.join(dir, f), d.rawPayload);
  }
  exportsRead.push({
    name,
    dir,
    format: String(config.format),
    empty,
    job,
    manifest: JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')),
    ...(text === undefined ? {} : { text }),
  });
}

beforeAll(async () => {
  // The pinned loaders (installed once; 15-90 s on a fresh machine, mostly download; then reused).
  python = path.join(
    execFileSync('bash', [path.join(ROOT, 'scripts/python/venv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim(),
    'python',
  );
  t = await startApp({ EXPORT_FILE_MAX_ROWS: '400' });
  a = await apiKeyHeaders(t.app, 'enterprise');
  await ingest(t.services, await demoRecords(t.services, 1500));
  const protocols = (await t.services.analytics.protocols()).slice(0, 3);
  for (const format of FORMATS) {
    await exportTo(
      format,
      {
        format,
        filters: { protocols, dateRange: RANGE },
        splits: { train: 0.8, test: 0.1, val: 0.1 },
        seed: 3,
        sampling: { strategy: 'STRATIFIED', rate: 0.5, seed: 4 },
        preprocessing: { normalize: ['fee'] },
      },
      false,
    );
    // No record falls in this window: a 0-row export.
    await exportTo(`${format}-empty`, { format, filters: { dateRange: { start: '2020-01-01', end: '2020-01-02' } }, splits: { train: 0.9, test: 0.1 } }, true);
  }
  await ingest(t.services, multilineRecords());
  await exportTo(
    'CSV-multiline',
    {
      format: 'CSV',
      filters: { protocols: ['pump_fun'], dateRange: { start: MULTILINE_DAY, end: MULTILINE_DAY } },
      columns: ['signature', 'block_time', 'fee', 'accounts', 'error_message', 'log_messages'],
      splits: { train: 1, test: 0, val: 0 },
    },
    false,
    MULTILINE_TEXT,
  );
  const out = execFileSync(
    python,
    [
      path.join(ROOT, 'test/support/read-exports.py'),
      JSON.stringify(exportsRead.map(({ name, dir, format, empty, text }) => ({ name, dir, format, empty, text }))),
      path.join(scratch, 'hf-cache'),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
  );
  report = JSON.parse(out) as Report;
}, 300_000);
afterAll(async () => {
  await t?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const LOADER_SPLIT: Record<string, string> = { train: 'train', test: 'test', val: 'validation' };

describe('every loader reads every format', () => {
  for (const format of FORMATS) {
    it(`${format}: pyarrow and datasets see the manifest's splits, rows and columns; times are UTC instants`, async () => {
      const e = exportsRead.find((x) => x.name === format)!;
      const seen = report[format]!;
      expect(seen.errors).toEqual({});
      const columns = e.manifest.schema.map((c: { name: string }) => c.name);
      for (const f of e.job.files) {
        expect(seen.pyarrow[f.name]!.rows).toBe(f.rows);
        expect(seen.pyarrow[f.name]!.columns).toEqual(columns);
        // block_time is a timestamp for pyarrow in every format, with UTC as its zone (pyarrow's
        // JSON reader turns a zoned time into UTC and keeps no zone: the instant is the same).
        expect(seen.pyarrow[f.name]!.types.block_time).toMatch(format === 'JSONL' ? /^timestamp\[s\]$/ : /^timestamp\[(s|ms|us|ns), tz=(UTC|\+00:00|Z)\]$/);
      }
      for (const mode of ['datasets', 'streaming'] as const) {
        const splits = seen[mode]!;
        expect(Object.keys(splits).sort()).toEqual(
          Object.keys(e.manifest.rowsPerSplit)
            .map((s) => LOADER_SPLIT[s]!)
            .sort(),
        );
        for (const [s, n] of Object.entries(e.manifest.rowsPerSplit)) {
          expect(splits[LOADER_SPLIT[s]!]!.rows, `${mode} ${s}`).toBe(n);
          expect(Object.keys(splits[LOADER_SPLIT[s]!]!.features)).toEqual(columns);
        }
        expect(splits.train!.features.block_time).toBe("Value('timestamp[s, tz=UTC]')");
        expect(String(splits.train!.first!.block_time)).toMatch(/\+00:00$/);
      }
      // The instant each loader sees is the stored one.
      const first = seen.pyarrow[e.job.files[0]!.name]!.first!;
      const [stored] = await t.services.wh.query<{ t: number }>(
        `SELECT toUnixTimestamp(block_time) AS t FROM transactions WHERE signature = {s:String} LIMIT 1`,
        { params: { s: String(first.signature) } },
      );
      const asUtc = (v: unknown) => Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(String(v)) ? String(v) : `${String(v)}Z`) / 1000;
      expect(asUtc(first.block_time)).toBe(Number(stored!.t));
      const viaDatasets = seen.datasets!.train!.first!;
      const [again] = await t.services.wh.query<{ t: number }>(
        `SELECT toUnixTimestamp(block_time) AS t FROM transactions WHERE signature = {s:String} LIMIT 1`,
        { params: { s: String(viaDatasets.signature) } },
      );
      expect(asUtc(viaDatasets.block_time)).toBe(Number(again!.t));
      expect(e.manifest.watermark.ingestedAt).toMatch(ISO);
      expect(e.manifest.watermark.maxBlockTime).toMatch(ISO);
    });
  }

  it('CSV and JSONL write timestamps as ISO 8601 UTC with Z; CSV writes accounts as a JSON array equal to the stored list', async () => {
    const csv = exportsRead.find((x) => x.name === 'CSV')!;
    const rows = await t.services.wh.query<{ signature: string; block_time: string; accounts: string }>(
      `SELECT signature, block_time, accounts FROM file('${path.join(csv.dir, csv.job.files[0]!.name)}', 'CSVWithNames', 'signature String, block_time String, accounts String') LIMIT 50`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.block_time).toMatch(ISO);
      const [stored] = await t.services.wh.query<{ accounts: string[]; t: number }>(
        `SELECT accounts, toUnixTimestamp(block_time) AS t FROM transactions WHERE signature = {s:String} LIMIT 1`,
        { params: { s: r.signature } },
      );
      expect(JSON.parse(r.accounts)).toEqual(stored!.accounts);
      expect(Date.parse(r.block_time) / 1000).toBe(Number(stored!.t));
    }
    const jsonl = exportsRead.find((x) => x.name === 'JSONL')!;
    const line = JSON.parse(readFileSync(path.join(jsonl.dir, jsonl.job.files[0]!.name), 'utf8').split('\n')[0]!);
    expect(line.block_time).toMatch(ISO);
    expect(Array.isArray(line.accounts)).toBe(true);
    // What datasets hands a user of the CSV: a string that parses as the list.
    const first = report.CSV!.datasets!.train!.first!;
    expect(Array.isArray(JSON.parse(String(first.accounts)))).toBe(true);
  });

  it('the normalised column has mean 0 and deviation 1 on the train split, as datasets reads it', () => {
    for (const format of FORMATS) {
      const train = report[format]!.datasets!.train!;
      expect(train.features.fee).toBe("Value('float64')");
      expect(Math.abs(train.feeMean!), format).toBeLessThan(1e-9);
      expect(Math.abs(train.feeStd! - 1), format).toBeLessThan(1e-9);
    }
  });

  it("the stratified sample keeps each protocol's share of the filtered rows within the stated tolerance, as datasets counts it", async () => {
    const e = exportsRead.find((x) => x.name === 'PARQUET')!;
    const protocols = e.manifest.config.filters.protocols as string[];
    const pop = await t.services.wh.query<{ p: string; n: string }>(
      `SELECT protocol_name AS p, count() AS n FROM transactions WHERE protocol_name IN {ps:Array(String)} AND date BETWEEN {s:Date} AND {e:Date} GROUP BY p`,
      { params: { ps: protocols, s: RANGE.start, e: RANGE.end } },
    );
    const N = pop.reduce((x, r) => x + Number(r.n), 0);
    for (const format of FORMATS) {
      const kept: Record<string, number> = {};
      for (const split of Object.values(report[format]!.datasets!)) for (const [p, n] of Object.entries(split.protocols)) kept[p] = (kept[p] ?? 0) + n;
      const K = Object.values(kept).reduce((x, y) => x + y, 0);
      for (const r of pop) {
        const target = Math.floor(0.5 * Number(r.n) + 0.5);
        expect(kept[r.p]! - target, `${format} ${r.p}`).toBeGreaterThanOrEqual(0);
        expect(kept[r.p]! - target, `${format} ${r.p}`).toBeLessThanOrEqual(3);
        expect(Math.abs(kept[r.p]! / K - Number(r.n) / N)).toBeLessThanOrEqual(e.manifest.sampling.maxShareDeviation + 1e-12);
      }
    }
  });
});

describe('an empty export', () => {
  for (const format of FORMATS) {
    it(`${format}: a file per split with the columns; datasets (streaming) and pyarrow read 0 rows with the schema`, () => {
      const e = exportsRead.find((x) => x.name === `${format}-empty`)!;
      const seen = report[`${format}-empty`]!;
      expect(seen.errors).toEqual({});
      expect(e.job.files.map((f) => [f.name, f.rows])).toEqual([
        [`train-00000.${format === 'PARQUET' ? 'parquet' : format.toLowerCase()}`, 0],
        [`test-00000.${format === 'PARQUET' ? 'parquet' : format.toLowerCase()}`, 0],
      ]);
      const columns = e.manifest.schema.map((c: { name: string }) => c.name);
      expect(columns).toContain('accounts');
      const card = readFileSync(path.join(e.dir, 'README.md'), 'utf8');
      expect(card).not.toMatch(/data_files:\n(?! {2}- split)/);
      expect(Object.keys(seen.streaming!).sort()).toEqual(['test', 'train']);
      expect(seen.streaming!.train!.rows).toBe(0);
      expect(Object.keys(seen.streaming!.train!.features)).toEqual(columns);
      if (format !== 'JSONL') {
        // pyarrow's JSON reader refuses a 0-byte file: an empty JSONL's schema is in the card.
        expect(seen.pyarrow[e.job.files[0]!.name]).toMatchObject({ rows: 0, columns });
      }
    });
  }
});

describe('a CSV of multi-line log messages', () => {
  it("pyarrow, pandas, the csv module and datasets, each with its defaults, read it row for row; the card's rule gives back every stored value", async () => {
    const e = exportsRead.find((x) => x.name === 'CSV-multiline')!;
    const seen = report['CSV-multiline']!;
    expect(seen.errors).toEqual({});
    const stored = await t.services.wh.query<{ signature: string; log_messages: string; error_message: string }>(
      'SELECT signature, log_messages, error_message FROM transactions WHERE date = {d:Date}',
      { params: { d: MULTILINE_DAY } },
    );
    expect(stored).toHaveLength(3000);
    expect(stored.filter((r) => r.log_messages.includes('\r\n')).length).toBeGreaterThan(100);
    expect(stored.filter((r) => /\r(?!\n)/.test(r.log_messages)).length).toBeGreaterThan(100);
    const [file] = e.job.files;
    expect(e.job.files).toHaveLength(1);
    expect(file!.rows).toBe(3000);
    // Larger than pyarrow's default block (1 MiB): its reader splits the file at line ends.
    const raw = readFileSync(path.join(e.dir, file!.name), 'utf8');
    expect(raw.length).toBeGreaterThan(2 * 1024 * 1024);
    // One record a line: no line break inside a value; in block-time order, as every export writes its rows.
    const lines = raw.split('\n');
    expect(lines).toHaveLength(3000 + 2);
    expect(raw).not.toContain('\r');
    expect(lines.slice(1, -1).map((l) => l.slice(1, l.indexOf('"', 1)))).toEqual(Array.from({ length: 3000 }, (_, i) => b58(`multiline-${i}`, 88)));
    expect(seen.pyarrow[file!.name]!.rows).toBe(3000);
    const want = Object.fromEntries(stored.map((r) => [r.signature, { log_messages: r.log_messages, error_message: r.error_message }]));
    for (const reader of ['pyarrow', 'pandas', 'csv'] as const) {
      const got = seen.text[file!.name]![reader];
      if (got.rows !== undefined) expect(got.rows, reader).toBe(3000);
      expect(got.decoded, reader).toEqual(want);
    }
    expect(seen.datasets!.train!.rows).toBe(3000);
    expect(seen.streaming!.train!.rows).toBe(3000);
    // The card states the rule.
    expect(readFileSync(path.join(e.dir, 'README.md'), 'utf8')).toMatch(/line feed[^\n]*`\\n`/);
  });
});
