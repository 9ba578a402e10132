// Dataset export jobs against the real engine and app: each format written, downloaded and
// read back with row counts equal to figures computed here independently (filters,
// sampling, splits); reproducible bytes; no transaction in two splits; cancel mid-job;
// ranged downloads; signed links and revocation; ownership; expiry; caps and the disk budget.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, apiKeyHeaders, createKey } from '../support/api-key.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let a: Record<string, string>;
let b: Record<string, string>;
let protocols: string[];
let clock = Date.now();
const scratch = mkdtempSync(path.join(tmpdir(), 'txa-export-read-'));

const HASH = 2 ** 32;
const ROWS = 3000;

beforeAll(async () => {
  // Small chunks: every job here runs in several chunks (several files per split).
  t = await startApp({ EXPORT_FILE_MAX_ROWS: '400', EXPORT_MAX_JOBS_FREE: '1', EXPORT_MAX_ROWS_FREE: '50' }, { exportClock: () => clock });
  a = await apiKeyHeaders(t.app, 'enterprise');
  b = { 'x-api-key': (await createKey(t.app, 'enterprise', 'other')).key };
  const report = await ingest(t.services, await demoRecords(t.services, ROWS));
  expect(report.rejected).toEqual([]);
  protocols = (await t.services.analytics.protocols()).slice(0, 3);
});
afterAll(async () => {
  await t.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

type Job = {
  id: string;
  status: string;
  progress: number;
  error: string | null;
  rowsWritten: number;
  rowsTotal: number | null;
  seeds: { split: number; sampling: number | null };
  files: { name: string; split: string; rows: number; bytes: number; sha256: string; url: string; path: string }[];
  manifest: { url: string; path: string } | null;
};

const post = (url: string, headers: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

/** Poll a job until it is finished; every progress seen is recorded. */
async function waitJob(id: string, headers = a, seen: number[] = []): Promise<Job> {
  for (let i = 0; i < 1200; i++) {
    const r = await get(`/v1/exports/${id}`, headers);
    expect(r.statusCode).toBe(200);
    const job = r.json<Job>();
    seen.push(job.progress);
    if (!['QUEUED', 'RUNNING'].includes(job.status)) return job;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`job ${id} did not finish`);
}

async function exportJob(config: unknown, headers = a, seen: number[] = []): Promise<Job> {
  const r = await post('/v1/exports', headers, config);
  expect(r.statusCode, r.body).toBe(202);
  return waitJob(r.json<Job>().id, headers, seen);
}

/** Download a file through the authenticated route and keep it for the engine to read. */
async function download(job: Job, name: string, headers = a): Promise<string> {
  const r = await get(`/v1/exports/${job.id}/files/${name}`, headers);
  expect(r.statusCode).toBe(200);
  const file = path.join(scratch, `${job.id}-${name}`);
  writeFileSync(file, r.rawPayload);
  return file;
}

const ENGINE_FORMAT = { PARQUET: 'Parquet', CSV: 'CSVWithNames', JSONL: 'JSONEachRow' } as const;
const sha = (buf: Buffer): string => createHash('sha256').update(buf).digest('hex');

/** The split and sample figures, computed here from the formula the docs state, not from the service's code. */
async function expectedCounts(opts: {
  protocols: string[];
  start: string;
  end: string;
  rate: number;
  sampleSeed: number;
  seed: number;
  train: number;
  test: number;
}) {
  const keep = `cityHash64(signature, toUInt64(${opts.sampleSeed})) % ${HASH} < ${Math.round(opts.rate * HASH)}`;
  const h = `cityHash64(signature, toUInt64(${opts.seed})) % ${HASH}`;
  const rows = await t.services.wh.query<{ split: string; n: string }>(
    `SELECT multiIf(${h} < ${Math.round(opts.train * HASH)}, 'train', ${h} < ${Math.round((opts.train + opts.test) * HASH)}, 'test', 'val') AS split, count() AS n
     FROM transactions WHERE protocol_name IN {p:Array(String)} AND date BETWEEN {s:Date} AND {e:Date} AND ${keep} GROUP BY split`,
    { params: { p: opts.protocols, s: opts.start, e: opts.end } },
  );
  return Object.fromEntries(rows.map((r) => [r.split, Number(r.n)]));
}

describe('formats, filters, sampling and splits', () => {
  const config = (format: string) => ({
    format,
    filters: { protocols: protocols.slice(0, 2), dateRange: { start: '2024-12-29', end: '2024-12-31' } },
    columns: ['signature', 'instruction_index', 'block_time', 'protocol_name', 'fee', 'success', 'error_message'],
    sampling: { strategy: 'RANDOM', rate: 0.6, seed: 11 },
    splits: { train: 0.7, test: 0.2, val: 0.1 },
    seed: 5,
  });

  for (const format of ['PARQUET', 'CSV', 'JSONL'] as const) {
    it(`writes ${format}; read back through the engine, the rows per split are the independent figures and no signature is in two splits`, async () => {
      const seen: number[] = [];
      const job = await exportJob(config(format), a, seen);
      expect(job.status, job.error ?? '').toBe('COMPLETED');
      expect(job.progress).toBe(100);
      // Progress only moves forward.
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
      const expected = await expectedCounts({
        protocols: protocols.slice(0, 2),
        start: '2024-12-29',
        end: '2024-12-31',
        rate: 0.6,
        sampleSeed: 11,
        seed: 5,
        train: 0.7,
        test: 0.2,
      });
      expect(Object.values(expected).reduce((x, y) => x + y, 0)).toBeGreaterThan(400); // several chunks
      const manifest = JSON.parse((await get(`/v1/exports/${job.id}/files/manifest.json`, a)).body) as {
        files: Job['files'];
        schema: { name: string; type: string }[];
        config: { seed: number };
        watermark: { ingestedAt: string };
      };
      expect(manifest.files).toEqual(job.files.map(({ url: _u, path: _p, ...f }) => f));
      expect(manifest.schema.map((c) => c.name)).toEqual(config(format).columns);
      expect(manifest.config.seed).toBe(5);
      expect(manifest.watermark.ingestedAt).toMatch(/^\d{4}-/);
      const bySplit: Record<string, Set<string>> = {};
      for (const f of job.files) {
        const file = await download(job, f.name);
        expect(sha(Buffer.from((await get(`/v1/exports/${job.id}/files/${f.name}`, a)).rawPayload))).toBe(f.sha256);
        const rows = await t.services.wh.query<{ signature: string }>(`SELECT signature FROM file('${file}', '${ENGINE_FORMAT[format]}')`);
        expect(rows.length).toBe(f.rows);
        bySplit[f.split] ??= new Set();
        for (const r of rows) bySplit[f.split]!.add(r.signature);
      }
      for (const split of ['train', 'test', 'val']) {
        const rows = job.files.filter((f) => f.split === split).reduce((x, f) => x + f.rows, 0);
        expect(rows, split).toBe(expected[split] ?? 0);
      }
      const all = Object.values(bySplit).flatMap((s) => [...s]);
      expect(new Set(all).size).toBe(all.length);
      // A loader reads the card's split layout.
      const card = (await get(`/v1/exports/${job.id}/files/README.md`, a)).body;
      expect(card).toMatch(/configs:\n- config_name: default\n {2}data_files:\n {2}- split: train\n {4}path: "train-\*\./);
    });
  }

  it('gives byte-identical Parquet files for the same configuration twice', async () => {
    const one = await exportJob(config('PARQUET'));
    const two = await exportJob(config('PARQUET'));
    expect(two.files.map((f) => [f.name, f.sha256, f.bytes])).toEqual(one.files.map((f) => [f.name, f.sha256, f.bytes]));
    expect(one.files.length).toBeGreaterThan(3);
  });

  it('draws seeds when none are given and reports them, so the export can be repeated', async () => {
    const job = await exportJob({ format: 'CSV', columns: ['signature'], sampling: { rate: 0.3 }, splits: { train: 0.5, test: 0.5 } });
    expect(job.status).toBe('COMPLETED');
    expect(Number.isInteger(job.seeds.split) && Number.isInteger(job.seeds.sampling)).toBe(true);
    const again = await exportJob({
      format: 'CSV',
      columns: ['signature'],
      sampling: { rate: 0.3, seed: job.seeds.sampling },
      splits: { train: 0.5, test: 0.5 },
      seed: job.seeds.split,
    });
    expect(again.files.map((f) => f.sha256)).toEqual(job.files.map((f) => f.sha256));
  });

  it('splits by separate statements when signature is not among the columns', async () => {
    const job = await exportJob({ format: 'JSONL', columns: ['fee'], splits: { train: 0.5, test: 0.3, val: 0.2 }, seed: 3 });
    expect(job.status).toBe('COMPLETED');
    const [total] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {p:Array(String)}', {
      params: { p: await t.services.analytics.protocols() },
    });
    expect(job.rowsWritten).toBe(Number(total!.n));
    expect(new Set(job.files.map((f) => f.split))).toEqual(new Set(['train', 'test', 'val']));
  });
});

/** Bytes of every export data file under `root` (what the service's budget counts: not manifests or cards). */
function heldIn(root: string): number {
  if (!existsSync(root)) return 0;
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && !['manifest.json', 'README.md'].includes(e.name))
      .reduce((n, e) => n + statSync(path.join(e.parentPath, e.name)).size, 0);
  } catch {
    return 0; // deleted while being listed
  }
}
const heldBytes = (dir: string): number => heldIn(path.join(dir, 'files'));

describe('SQL exports', () => {
  it('exports every row of a sandboxed SELECT (no 10,000 or 1,000 row cap), split by signature', async () => {
    const query = 'SELECT signature, protocol_name, fee FROM transactions WHERE fee > 0';
    const r = await post('/v1/query/exports', a, { query, format: 'CSV', splits: { train: 0.8, test: 0.2, val: 0 }, seed: 9 });
    expect(r.statusCode, r.body).toBe(202);
    const job = await waitJob(r.json<Job>().id);
    expect(job.status, job.error ?? '').toBe('COMPLETED');
    // Inactive protocols are hidden from client SQL, exports included.
    const [n] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE fee > 0 AND protocol_name IN {p:Array(String)}', {
      params: { p: await t.services.analytics.protocols() },
    });
    expect(job.rowsWritten).toBe(Number(n!.n));
    expect(job.rowsWritten).toBeGreaterThan(1000);
    expect(job.files.map((f) => f.name)).toEqual(['train-00000.csv', 'test-00000.csv']);
    // Same job system: listed with the filter exports, newest first.
    const list = (await get('/v1/query/exports?first=2', a)).json<{ jobs: Job[]; hasNextPage: boolean; endCursor: string }>();
    expect(list.jobs[0]!.id).toBe(job.id);
    expect(list.hasNextPage).toBe(true);
    const next = (await get(`/v1/query/exports?first=2&after=${list.endCursor}`, a)).json<{ jobs: Job[] }>();
    expect(next.jobs[0]!.id).not.toBe(job.id);
  });

  it('a query with no rows completes with zero rows in every format (the engine cannot count an empty text file)', async () => {
    for (const format of ['CSV', 'JSONL', 'PARQUET']) {
      const r = await post('/v1/query/exports', a, { query: 'SELECT signature, fee FROM transactions WHERE fee < 0', format });
      expect(r.statusCode, r.body).toBe(202);
      const job = await waitJob(r.json<Job>().id);
      expect(job.status, `${format}: ${job.error ?? ''}`).toBe('COMPLETED');
      expect(job.rowsWritten).toBe(0);
      expect(job.files.every((f) => f.rows === 0)).toBe(true);
    }
  });

  it('refuses SQL the sandbox refuses, naming it (400), and splits without a signature column', async () => {
    const drop = await post('/v1/query/exports', a, { query: 'DROP TABLE transactions' });
    expect(drop.statusCode).toBe(400);
    expect(drop.json().message).toMatch(/DROP statements are not allowed/);
    const nosig = await post('/v1/query/exports', a, { query: 'SELECT fee FROM transactions', splits: { train: 0.5, test: 0.5 } });
    expect(nosig.statusCode).toBe(400);
    expect(nosig.json().message).toMatch(/^splits needs a column named signature/);
  });
});

describe('cancellation', () => {
  it('cancels a running job between chunks: CANCELLED at once, its files deleted, progress never backwards', async () => {
    // Many small chunks for this job: it runs long enough to be cancelled mid-way.
    const cfg = t.services.config.exports;
    const saved = cfg.fileMaxRows;
    cfg.fileMaxRows = 15;
    try {
      const r = await post('/v1/exports', a, { format: 'PARQUET', splits: { train: 0.5, test: 0.5 } });
      const id = r.json<Job>().id;
      const seen: number[] = [];
      for (let i = 0; i < 500; i++) {
        const job = (await get(`/v1/exports/${id}`, a)).json<Job>();
        seen.push(job.progress);
        if (job.status === 'RUNNING' && job.progress > 0) break;
        await new Promise((res) => setTimeout(res, 10));
      }
      expect(seen.at(-1)).toBeGreaterThan(0);
      const c = await post(`/v1/exports/${id}/cancel`, a, {});
      expect(c.statusCode).toBe(200);
      const cancelled = c.json<Job>();
      expect(cancelled.status).toBe('CANCELLED');
      expect(cancelled.progress).toBeLessThan(100);
      expect(cancelled.progress).toBeGreaterThanOrEqual(seen.at(-1)!);
      // The worker stops at the end of its chunk and deletes what the job wrote.
      const dir = path.join(cfg.dir, 'files', id);
      for (let i = 0; i < 500 && (existsSync(dir) || t.services.exports.stats().running > 0); i++) await new Promise((res) => setTimeout(res, 10));
      expect(existsSync(dir)).toBe(false);
      const after = (await get(`/v1/exports/${id}`, a)).json<Job>();
      expect(after.status).toBe('CANCELLED');
      expect(after.files).toEqual([]);
      expect((await get(`/v1/exports/${id}/files/train-00000.parquet`, a)).statusCode).toBe(404);
    } finally {
      cfg.fileMaxRows = saved;
    }
  });
});

describe('downloads', () => {
  let job: Job;
  beforeAll(async () => {
    job = await exportJob({ format: 'PARQUET', columns: ['signature', 'fee', 'log_messages'], splits: { train: 1 } });
    expect(job.status).toBe('COMPLETED');
  });

  it('resumes an interrupted download with Range and If-Range to the manifest sha256', async () => {
    const f = job.files[0]!;
    const first = await get(f.path, { ...a, range: 'bytes=0-99' });
    expect(first.statusCode).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-99/${f.bytes}`);
    const etag = first.headers.etag as string;
    expect(etag).toBe(`"${f.sha256}"`);
    expect(first.headers['content-disposition']).toContain(`filename="${f.name}"`);
    const rest = await get(f.path, { ...a, range: 'bytes=100-', 'if-range': etag });
    expect(rest.statusCode).toBe(206);
    expect(sha(Buffer.concat([first.rawPayload, rest.rawPayload]))).toBe(f.sha256);
    // A stale validator gets the whole file, not a splice.
    const stale = await get(f.path, { ...a, range: 'bytes=100-', 'if-range': '"0000"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.length).toBe(f.bytes);
    const past = await get(f.path, { ...a, range: `bytes=${f.bytes}-` });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${f.bytes}`);
  });

  it('serves a signed link without the key, and another key gets not-found for the job and its files', async () => {
    const f = job.files[0]!;
    const viaLink = await get(f.url);
    expect(viaLink.statusCode).toBe(200);
    expect(sha(viaLink.rawPayload)).toBe(f.sha256);
    expect((await get(f.url.replace(/sig=[^&]+/, 'sig=AAAA'))).statusCode).toBe(403);
    expect((await get(f.url.replace(/expires=\d+/, (m) => `expires=${Number(m.slice(8)) + 1}`))).statusCode).toBe(403);
    expect((await get(`/v1/exports/${job.id}`, b)).statusCode).toBe(404);
    expect((await get(f.path, b)).statusCode).toBe(404);
    expect((await post(`/v1/exports/${job.id}/cancel`, b, {})).statusCode).toBe(404);
    const listed = (await get('/v1/exports', b)).json<{ jobs: Job[] }>();
    expect(listed.jobs.map((j) => j.id)).not.toContain(job.id);
  });

  it("counts a link's downloads against the issuing key's rate limit, and refused links against the address", async () => {
    const freeKey = await createKey(t.app, 'free', 'link-limits');
    const free = { 'x-api-key': freeKey.key };
    // Within the free plan's 50-row cap of this suite.
    const created = await post('/v1/query/exports', free, { query: 'SELECT signature FROM transactions LIMIT 10', format: 'CSV' });
    expect(created.statusCode, created.body).toBe(202);
    const mine = await waitJob(created.json<Job>().id, free);
    expect(mine.status, mine.error ?? '').toBe('COMPLETED');
    const url = mine.files[0]!.url;
    const first = await get(url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-plan']).toBe('free');
    let limited: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 250 && limited === undefined; i++) {
      const r = await get(url);
      if (r.statusCode === 429) limited = r;
      else expect(r.statusCode).toBe(200);
    }
    expect(limited, 'no 429 in 250 downloads on a 100-a-minute key').toBeDefined();
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);
    // Forged links: counted against the address like requests without a valid key (this
    // suite's per-address limit is 100,000, so the count is seen in the headers).
    const forged = url.replace(/sig=[^&]+/, 'sig=AAAA');
    const one = await t.app.inject({ method: 'GET', url: forged, remoteAddress: '203.0.113.77' });
    const two = await t.app.inject({ method: 'GET', url: forged, remoteAddress: '203.0.113.77' });
    expect([one.statusCode, two.statusCode]).toEqual([403, 403]);
    expect(one.headers['x-ratelimit-limit']).toBe('100000');
    expect(Number(two.headers['x-ratelimit-remaining'])).toBe(Number(one.headers['x-ratelimit-remaining']) - 1);
    // The link's downloads are the issuing key's usage too, as charged: each one, the refused ones as rate-limited.
    await t.services.access.usage.flush();
    const rows = await t.services.access.usageStore.query({
      keyId: freeKey.id,
      fromMs: Date.now() - 3_600_000,
      toMs: Date.now() + 60_000,
      granularity: 'hour',
    });
    const link = rows.filter((r) => r.method.includes('/v1/exports/links/'));
    const sum = (k: 'requests' | 'rateLimited') => link.reduce((n, r) => n + r[k], 0);
    expect(sum('requests')).toBeGreaterThanOrEqual(2);
    expect(sum('rateLimited')).toBeGreaterThanOrEqual(1);
  });

  it("answers 403 to a revoked key's links", async () => {
    const c = await createKey(t.app, 'enterprise', 'to-revoke');
    const mine = await exportJob({ format: 'CSV', columns: ['signature'] }, { 'x-api-key': c.key });
    const url = mine.files[0]!.url;
    expect((await get(url)).statusCode).toBe(200);
    const rev = await t.app.inject({ method: 'POST', url: `/admin/keys/${c.id}/revoke`, headers: adminHeaders() });
    expect(rev.statusCode).toBe(200);
    const refused = await get(url);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toMatch(/no longer active/);
  });

  it('expires a job after retention: EXPIRED, files deleted, links dead', async () => {
    const mine = await exportJob({ format: 'JSONL', columns: ['signature'] });
    const dir = path.join(t.services.config.exports.dir, 'files', mine.id);
    expect(existsSync(dir)).toBe(true);
    clock += (t.services.config.exports.retentionHours * 3600 + 1) * 1000;
    try {
      t.services.exports.sweep();
      const after = (await get(`/v1/exports/${mine.id}`, a)).json<Job>();
      expect(after.status).toBe('EXPIRED');
      expect(existsSync(dir)).toBe(false);
      expect((await get(mine.files[0]!.path, a)).statusCode).toBe(404);
      expect((await get(mine.files[0]!.url)).statusCode).toBe(403);
      // One more retention period later the job itself is forgotten.
      clock += (t.services.config.exports.retentionHours * 3600 + 1) * 1000;
      t.services.exports.sweep();
      expect((await get(`/v1/exports/${mine.id}`, a)).statusCode).toBe(404);
    } finally {
      clock = Date.now();
    }
  });
});

describe('limits', () => {
  it("refuses a key past its plan's concurrent jobs with 429 and Retry-After", async () => {
    const free = await apiKeyHeaders(t.app, 'free');
    // The free plan's row cap here is 50: the first job fails once planned, with the reason.
    const first = await post('/v1/exports', free, { format: 'CSV', columns: ['signature'] });
    expect(first.statusCode).toBe(202);
    const second = await post('/v1/exports', free, { format: 'CSV', columns: ['signature'] });
    expect(second.statusCode).toBe(429);
    expect(second.headers['retry-after']).toBe('30');
    expect(second.json().message).toMatch(/plan free allows 1 queued or running/);
    const done = await waitJob(first.json<Job>().id, free);
    expect(done.status).toBe('FAILED');
    expect(done.error).toMatch(/the free plan allows 50 rows per export/);
  });

  it('fails a job that passes the disk budget with a clear reason, and deletes its files', async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.diskBudgetBytes;
    cfg.diskBudgetBytes = 1000;
    try {
      const job = await exportJob({ format: 'CSV' });
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/export disk budget is used up/);
      expect(existsSync(path.join(cfg.dir, 'files', job.id))).toBe(false);
    } finally {
      cfg.diskBudgetBytes = saved;
    }
  });

  it('fails a SQL export whose rows would pass the disk budget before writing any (rows need not come from a table)', async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.diskBudgetBytes;
    cfg.diskBudgetBytes = heldBytes(cfg.dir) + 10_000_000;
    try {
      for (const format of ['CSV', 'JSONL', 'PARQUET']) {
        // 2,000 rows of 100 kB of random text: ~200 MB in every format, against 10 MB of room.
        const r = await post('/v1/query/exports', a, { query: 'SELECT signature, randomPrintableASCII(100000) AS pad FROM transactions LIMIT 2000', format });
        expect(r.statusCode, r.body).toBe(202);
        const dir = path.join(cfg.dir, 'files', r.json<Job>().id);
        let largest = 0;
        const sizes = setInterval(() => {
          largest = Math.max(largest, existsSync(dir) ? heldIn(dir) : 0);
        }, 5);
        const job = await waitJob(r.json<Job>().id);
        clearInterval(sizes);
        expect(job.status, format).toBe('FAILED');
        expect(job.error).toMatch(/^the export disk budget is used up: the query's rows \(about \d+ bytes\) would take export files to/);
        expect(largest, `${format}: bytes written before failing`).toBe(0);
        expect(existsSync(dir)).toBe(false);
      }
    } finally {
      cfg.diskBudgetBytes = saved;
    }
  });

  it('stops before writing an export whose estimated bytes would pass the disk budget, though its first chunk would fit', async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.diskBudgetBytes;
    cfg.diskBudgetBytes = Number.MAX_SAFE_INTEGER;
    try {
      const probe = await exportJob({ format: 'CSV', columns: ['signature'] });
      expect(probe.status).toBe('COMPLETED');
      const first = probe.files.filter((f) => f.name.endsWith('-00000.csv')).reduce((x, f) => x + f.bytes, 0);
      expect(probe.files.length).toBeGreaterThan(3);
      // Room for the files held now and this job's first chunk, not for the whole job.
      cfg.diskBudgetBytes = heldBytes(cfg.dir) + first + 10;
      const r = await post('/v1/exports', a, { format: 'CSV', columns: ['signature'] });
      const dir = path.join(cfg.dir, 'files', r.json<Job>().id);
      let largest = 0;
      const sizes = setInterval(() => {
        largest = Math.max(largest, heldIn(dir));
      }, 5);
      const job = await waitJob(r.json<Job>().id);
      clearInterval(sizes);
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/^the export disk budget is used up: this export \(about \d+ bytes\) would take export files to/);
      expect(largest).toBe(0);
      expect(existsSync(dir)).toBe(false);
    } finally {
      cfg.diskBudgetBytes = saved;
    }
  });
});
