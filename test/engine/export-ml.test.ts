// Training-set options of filter exports against the real engine and app: STRATIFIED samples
// keep exactly the rows an independent reference picks (window functions over the documented
// rule, not the service's two-pass search), each stratum's share within the stated tolerance,
// reproducibly by seed; normalised columns have mean 0 and deviation 1 (z-score) or span
// [0, 1] (min-max) on the train split, the other splits scaled with the same parameters the
// card states; one-hot columns mark each row's value; the job fields rowCount, fileSize,
// downloadUrl and completedAt on REST and GraphQL; bad options are 400s naming the field.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let a: Record<string, string>;
const scratch = mkdtempSync(path.join(tmpdir(), 'txa-export-ml-'));
const HASH = 2 ** 32;
const RANGE = { start: '2024-12-29', end: '2024-12-31' };

beforeAll(async () => {
  t = await startApp({ EXPORT_FILE_MAX_ROWS: '500' });
  a = await apiKeyHeaders(t.app, 'enterprise');
  await ingest(t.services, await demoRecords(t.services, 4000));
});
afterAll(async () => {
  await t.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

type File = { name: string; split: string; rows: number; bytes: number; sha256: string; url: string };
type Job = {
  id: string;
  status: string;
  error: string | null;
  rowsWritten: number;
  files: File[];
  rowCount: number | null;
  fileSize: number | null;
  downloadUrl: string | null;
  completedAt: string | null;
  finishedAt: string | null;
};

const post = (url: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers: { ...a, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers: a });

async function exportJob(config: unknown): Promise<Job> {
  const r = await post('/v1/exports', config);
  expect(r.statusCode, r.body).toBe(202);
  for (let i = 0; i < 1200; i++) {
    const job = (await get(`/v1/exports/${r.json<Job>().id}`)).json<Job>();
    if (!['QUEUED', 'RUNNING'].includes(job.status)) {
      expect(job.status, job.error ?? '').toBe('COMPLETED');
      return job;
    }
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('job did not finish');
}

const ENGINE = { PARQUET: 'Parquet', CSV: 'CSVWithNames', JSONL: 'JSONEachRow' } as const;

/** Every row of a job's files (optionally one split), read back by the engine from the downloaded bytes. */
async function rowsOf<T>(job: Job, format: keyof typeof ENGINE, columns: string, split?: string): Promise<T[]> {
  const out: T[] = [];
  for (const f of job.files.filter((x) => split === undefined || x.split === split)) {
    const file = path.join(scratch, `${job.id}-${f.name}`);
    writeFileSync(file, (await get(`/v1/exports/${job.id}/files/${f.name}`)).rawPayload);
    out.push(...(await t.services.wh.query<T>(`SELECT ${columns} FROM file('${file}', '${ENGINE[format]}')`)));
  }
  return out;
}

const manifestOf = async (job: Job) => JSON.parse((await get(`/v1/exports/${job.id}/files/manifest.json`)).body);
const where = (protocols: string[]) => `protocol_name IN (${protocols.map((p) => `'${p}'`).join(', ')}) AND date BETWEEN '${RANGE.start}' AND '${RANGE.end}'`;

/**
 * The stratified sample by the rule the docs state, computed independently: in each stratum,
 * rank the rows by h = cityHash64(signature, seed) % 2^32; k = floor(rate * n + 0.5); keep the
 * rows whose h is at most the k-th smallest.
 */
async function referenceStratified(column: string, protocols: string[], rate: number, seed: number) {
  const h = `cityHash64(signature, toUInt64(${seed})) % ${HASH}`;
  return t.services.wh.query<{ s: string; signature: string; instruction_index: number }>(
    `WITH ranked AS (
       SELECT toString(${column}) AS s, signature, instruction_index, ${h} AS h,
              row_number() OVER (PARTITION BY s ORDER BY h) AS rn, count() OVER (PARTITION BY s) AS n
       FROM transactions WHERE ${where(protocols)})
     SELECT r.s AS s, r.signature AS signature, r.instruction_index AS instruction_index
     FROM ranked AS r INNER JOIN (SELECT s, max(h) AS kth FROM ranked WHERE rn <= floor(${rate} * n + 0.5) GROUP BY s) AS k ON r.s = k.s
     WHERE r.h <= k.kth`,
  );
}

describe('STRATIFIED sampling', () => {
  let protocols: string[];
  beforeAll(async () => {
    protocols = (await t.services.analytics.protocols()).slice(0, 4);
  });

  it("keeps exactly the rows of the documented rule, each stratum's share within the stated tolerance, reproducibly by seed", async () => {
    const config = {
      format: 'PARQUET',
      filters: { protocols, dateRange: RANGE },
      columns: ['signature', 'instruction_index', 'protocol_name', 'fee'],
      sampling: { strategy: 'STRATIFIED', rate: 0.3, seed: 9 },
      splits: { train: 0.8, test: 0.2 },
      seed: 1,
    };
    const job = await exportJob(config);
    const got = await rowsOf<{ signature: string; instruction_index: number; protocol_name: string }>(
      job,
      'PARQUET',
      'signature, instruction_index, protocol_name',
    );
    const ref = await referenceStratified('protocol_name', protocols, 0.3, 9);
    const key = (r: { signature: string; instruction_index: number }) => `${r.signature}/${r.instruction_index}`;
    expect(new Set(got.map(key))).toEqual(new Set(ref.map(key)));
    expect(got.length).toBe(ref.length);

    // Shares: the population's, from the table; the sample's, from the files.
    const pop = await t.services.wh.query<{ s: string; n: string }>(
      `SELECT protocol_name AS s, count() AS n FROM transactions WHERE ${where(protocols)} GROUP BY s`,
    );
    const N = pop.reduce((x, r) => x + Number(r.n), 0);
    const K = got.length;
    const manifest = await manifestOf(job);
    expect(manifest.sampling.column).toBe('protocol_name');
    for (const r of pop) {
      const kept = got.filter((g) => g.protocol_name === r.s).length;
      const target = Math.floor(0.3 * Number(r.n) + 0.5);
      // The stated count rule: the target, plus at most the other instructions of one transaction.
      expect(kept).toBeGreaterThanOrEqual(target);
      expect(kept - target).toBeLessThanOrEqual(3);
      expect(manifest.sampling.strata.find((x: { value: string }) => x.value === r.s)).toEqual({ value: r.s, rows: Number(r.n), kept });
      expect(Math.abs(kept / K - Number(r.n) / N)).toBeLessThanOrEqual(manifest.sampling.maxShareDeviation + 1e-12);
    }
    // The stated tolerance is small: well under one percentage point here.
    expect(manifest.sampling.maxShareDeviation).toBeLessThan(0.01);

    const again = await exportJob(config);
    expect(again.files.map((f) => f.sha256)).toEqual(job.files.map((f) => f.sha256));
    const other = await exportJob({ ...config, sampling: { ...config.sampling, seed: 10 } });
    expect(other.files.map((f) => f.sha256)).not.toEqual(job.files.map((f) => f.sha256));
  });

  it('stratifies by a named column (instruction_type), in CSV, the same rule', async () => {
    const job = await exportJob({
      format: 'CSV',
      filters: { protocols, dateRange: RANGE },
      columns: ['signature', 'instruction_index', 'instruction_type'],
      sampling: { strategy: 'STRATIFIED', rate: 0.25, seed: 77, stratifyBy: 'instruction_type' },
      seed: 2,
    });
    const got = await rowsOf<{ signature: string; instruction_index: number }>(job, 'CSV', 'signature, instruction_index');
    const ref = await referenceStratified('instruction_type', protocols, 0.25, 77);
    expect(new Set(got.map((r) => `${r.signature}/${r.instruction_index}`))).toEqual(new Set(ref.map((r) => `${r.signature}/${r.instruction_index}`)));
    const card = (await get(`/v1/exports/${job.id}/files/README.md`)).body;
    expect(card).toContain('## Stratified sample by instruction_type');
  });

  it('refuses a stratum column off the allow-list, and STRATIFIED on a SQL export, naming the field', async () => {
    const bad = await post('/v1/exports', { sampling: { strategy: 'STRATIFIED', rate: 0.5, stratifyBy: 'fee' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/sampling\.stratifyBy must be one of protocol_name/);
    const sql = await post('/v1/query/exports', { query: 'SELECT signature FROM transactions', sampling: { strategy: 'STRATIFIED', rate: 0.5 } });
    expect(sql.statusCode).toBe(400);
    expect(sql.json().message).toMatch(/sampling\.strategy STRATIFIED is offered for exports by filters/);
  });
});

describe('preprocessing', () => {
  let protocols: string[];
  beforeAll(async () => {
    protocols = (await t.services.analytics.protocols()).slice(0, 3);
  });
  const splitOf = (seed: number) => `multiIf(cityHash64(signature, toUInt64(${seed})) % ${HASH} < ${Math.round(0.7 * HASH)}, 'train', 'test')`;

  it("z-score: the train split's normalised columns have mean 0 and deviation 1; test rows use the same stated parameters", async () => {
    const job = await exportJob({
      format: 'JSONL',
      filters: { protocols, dateRange: RANGE },
      columns: ['signature', 'instruction_index', 'fee', 'compute_units', 'success'],
      splits: { train: 0.7, test: 0.3 },
      seed: 21,
      preprocessing: { normalize: ['fee', 'compute_units'] },
    });
    const train = await rowsOf<{ fee: number; compute_units: number }>(job, 'JSONL', 'fee, compute_units', 'train');
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
    for (const c of ['fee', 'compute_units'] as const) {
      const xs = train.map((r) => Number(r[c]));
      expect(Math.abs(mean(xs))).toBeLessThan(1e-9);
      expect(Math.abs(sd(xs) - 1)).toBeLessThan(1e-9);
    }
    // The parameters the manifest states are the train split's, computed here from the table.
    const [raw] = await t.services.wh.query<{ m: number; s: number; n: string }>(
      `SELECT avg(fee) AS m, stddevPopStable(toFloat64(fee)) AS s, count() AS n FROM transactions WHERE ${where(protocols)} AND ${splitOf(21)} = 'train'`,
    );
    const manifest = await manifestOf(job);
    const fee = manifest.preprocessing.normalize.find((n: { column: string }) => n.column === 'fee');
    expect(manifest.preprocessing.fittedOn).toBe('train');
    expect(fee.rows).toBe(Number(raw!.n));
    expect(fee.mean).toBeCloseTo(raw!.m, 6);
    expect(fee.std).toBeCloseTo(raw!.s, 6);
    // A test row is (raw - mean) / std with those parameters.
    const test = await rowsOf<{ signature: string; instruction_index: number; fee: number }>(job, 'JSONL', 'signature, instruction_index, fee', 'test');
    expect(test.length).toBeGreaterThan(0);
    const one = test[0]!;
    const [stored] = await t.services.wh.query<{ fee: string }>(
      `SELECT fee FROM transactions WHERE signature = '${one.signature}' AND instruction_index = ${one.instruction_index}`,
    );
    expect(one.fee).toBeCloseTo((Number(stored!.fee) - fee.mean) / fee.std, 9);
    const card = (await get(`/v1/exports/${job.id}/files/README.md`)).body;
    expect(card).toContain(`\`fee\`: z-score, (x - mean) / std with mean = ${fee.mean}, std = ${fee.std}`);
  });

  it("min-max spans [0, 1] on the train split; one-hot writes one 0/1 column per value, marking each row's own", async () => {
    const job = await exportJob({
      format: 'PARQUET',
      filters: { protocols, dateRange: RANGE },
      columns: ['signature', 'instruction_index', 'protocol_name', 'accounts_count'],
      splits: { train: 0.7, test: 0.3 },
      seed: 21,
      preprocessing: { normalize: ['accounts_count'], normalizeMethod: 'MIN_MAX', oneHotEncode: ['protocol_name'] },
    });
    const names = protocols.map((p) => `protocol_name_${p}`);
    const rows = await rowsOf<Record<string, number | string>>(job, 'PARQUET', `signature, instruction_index, accounts_count, ${names.join(', ')}`, 'train');
    const xs = rows.map((r) => Number(r.accounts_count));
    expect(Math.min(...xs)).toBe(0);
    expect(Math.max(...xs)).toBe(1);
    const sigs = await t.services.wh.query<{ signature: string; instruction_index: number; protocol_name: string }>(
      `SELECT signature, instruction_index, protocol_name FROM transactions WHERE ${where(protocols)}`,
    );
    const protocolOf = new Map(sigs.map((s) => [`${s.signature}/${s.instruction_index}`, s.protocol_name]));
    for (const r of rows) {
      const own = protocolOf.get(`${r.signature}/${r.instruction_index}`)!;
      expect(names.map((n) => Number(r[n]))).toEqual(protocols.map((p) => (p === own ? 1 : 0)));
    }
    const manifest = await manifestOf(job);
    expect(manifest.schema.map((c: { name: string }) => c.name)).toEqual(['signature', 'instruction_index', ...names, 'accounts_count']);
    expect(manifest.preprocessing.oneHot).toEqual([
      { column: 'protocol_name', categories: [...protocols].sort(), names: [...protocols].sort().map((p) => `protocol_name_${p}`) },
    ]);
  });

  it('refuses columns off the allow-lists or not exported, naming the field (REST and GraphQL words)', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { preprocessing: { normalize: ['signature'] } },
        /preprocessing\.normalize\[0\] "signature" cannot be used here; columns: fee, compute_units, accounts_count/,
      ],
      [{ columns: ['signature'], preprocessing: { normalize: ['fee'] } }, /preprocessing\.normalize\[0\] "fee" is not among the exported columns/],
      [{ preprocessing: { oneHotEncode: ['raw_data'] } }, /preprocessing\.oneHotEncode\[0\] "raw_data" cannot be used here/],
      [{ preprocessing: { normalize: ['fee'], normalizeMethod: 'LOG' } }, /preprocessing\.normalizeMethod must be one of Z_SCORE, MIN_MAX/],
      [{ preprocessing: { scale: ['fee'] } }, /preprocessing has no field "scale"/],
    ];
    for (const [body, message] of cases) {
      const r = await post('/v1/exports', body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json().message).toMatch(message);
    }
    const gql = graphqlClient(
      () => t.app,
      () => a,
    );
    const r = await gql('mutation { exportDataset(config: { preprocessing: { normalize: ["slot"] } }) { id } }');
    expect(r.body.errors?.[0]?.message).toMatch(/^config\.preprocessing\.normalize\[0\] "slot" cannot be used here/);
  });
});

describe('job fields rowCount, fileSize, downloadUrl, completedAt', () => {
  it("are real on REST and GraphQL: the files' rows and bytes, a working link, the completion time", async () => {
    // One protocol's day: fewer rows than a chunk, so one file.
    const protocol = (await t.services.analytics.protocols())[0]!;
    const job = await exportJob({
      format: 'CSV',
      filters: { protocols: [protocol], dateRange: { start: RANGE.start, end: RANGE.start } },
      columns: ['signature', 'fee'],
    });
    expect(job.files).toHaveLength(1);
    expect(job.rowCount).toBe(job.files[0]!.rows);
    expect(job.rowCount).toBe(job.rowsWritten);
    expect(job.fileSize).toBe(job.files[0]!.bytes);
    expect(job.completedAt).toBe(job.finishedAt);
    expect(Date.parse(job.completedAt!)).not.toBeNaN();
    const file = await t.app.inject({ method: 'GET', url: job.downloadUrl! });
    expect(file.statusCode).toBe(200);
    expect(file.body.split('\n')[0]).toBe('"signature","fee"');

    const gql = graphqlClient(
      () => t.app,
      () => a,
    );
    const r = await gql<{ exportJob: Record<string, unknown> }>(
      'query($id: ID!) { exportJob(id: $id) { rowCount fileSize downloadUrl error createdAt completedAt } }',
      { id: job.id },
    );
    expect(r.body.errors).toBeUndefined();
    const g = r.body.data!.exportJob;
    expect(g).toMatchObject({ rowCount: job.rowCount, fileSize: job.fileSize, error: null, completedAt: job.completedAt });
    expect((await t.app.inject({ method: 'GET', url: g.downloadUrl as string })).statusCode).toBe(200);

    // Several files: the link is the manifest's, which lists them.
    const split = await exportJob({ format: 'CSV', filters: { dateRange: RANGE }, columns: ['signature', 'fee'], splits: { train: 0.5, test: 0.5 } });
    expect(split.files.length).toBeGreaterThan(1);
    const listed = JSON.parse((await t.app.inject({ method: 'GET', url: split.downloadUrl! })).body);
    expect(listed.files.map((f: File) => f.name)).toEqual(split.files.map((f) => f.name));
    expect(split.fileSize).toBe(split.files.reduce((x, f) => x + f.bytes, 0));

    // Not yet COMPLETED: null.
    const started = (await post('/v1/exports', { filters: { dateRange: RANGE } })).json<Job>();
    expect(started).toMatchObject({ rowCount: null, fileSize: null, downloadUrl: null, completedAt: null });
  });
});

describe('files every loader reads', () => {
  it("a SQL export's CSV writes arrays as JSON and times as ISO 8601 UTC; its schema says String for them", async () => {
    const r = await post('/v1/query/exports', {
      query: `SELECT signature, accounts, block_time FROM transactions WHERE date = '${RANGE.start}' ORDER BY signature LIMIT 30`,
      format: 'CSV',
    });
    expect(r.statusCode, r.body).toBe(202);
    let job = r.json<Job>();
    for (let i = 0; i < 400 && ['QUEUED', 'RUNNING'].includes(job.status); i++) {
      await new Promise((res) => setTimeout(res, 25));
      job = (await get(`/v1/exports/${job.id}`)).json<Job>();
    }
    expect(job.status, job.error ?? '').toBe('COMPLETED');
    const rows = await rowsOf<{ signature: string; accounts: string; block_time: string }>(
      job,
      'CSV',
      'signature, accounts, toString(block_time) AS block_time',
    );
    expect(rows).toHaveLength(30);
    const csv = (await get(`/v1/exports/${job.id}/files/${job.files[0]!.name}`)).body.split('\n');
    expect(csv[1]).toMatch(/^"[1-9A-HJ-NP-Za-km-z]+","\[.*\]","\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"$/);
    for (const row of rows) {
      const [stored] = await t.services.wh.query<{ accounts: string[] }>(`SELECT accounts FROM transactions WHERE signature = {s:String} LIMIT 1`, {
        params: { s: row.signature },
      });
      expect(JSON.parse(row.accounts)).toEqual(stored!.accounts);
    }
    const manifest = await manifestOf(job);
    expect(manifest.schema.find((c: { name: string }) => c.name === 'accounts').type).toBe('String');
    expect(manifest.watermark.ingestedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('an export of 0 rows with every ML option completes: one empty file per split, with the columns as stored', async () => {
    const job = await exportJob({
      format: 'PARQUET',
      filters: { dateRange: { start: '2020-01-01', end: '2020-01-01' } },
      columns: ['signature', 'protocol_name', 'fee'],
      sampling: { strategy: 'STRATIFIED', rate: 0.5 },
      splits: { train: 0.5, val: 0.5 },
      preprocessing: { normalize: ['fee'], oneHotEncode: ['protocol_name'] },
    });
    expect(job.files.map((f) => [f.name, f.rows])).toEqual([
      ['train-00000.parquet', 0],
      ['val-00000.parquet', 0],
    ]);
    expect(job.rowCount).toBe(0);
    const manifest = await manifestOf(job);
    expect(manifest.schema.map((c: { name: string }) => c.name)).toEqual(['signature', 'protocol_name', 'fee']);
    expect(manifest.sampling.strata).toEqual([]);
    expect(manifest.preprocessing.normalize[0]).toMatchObject({ column: 'fee', rows: 0, mean: null });
    const card = (await get(`/v1/exports/${job.id}/files/README.md`)).body;
    expect(card).toMatch(/This export has no rows/);
    expect(card).toMatch(/data_files:\n {2}- split: train\n {4}path: "train-\*\.parquet"\n {2}- split: validation/);
  });
});
