// Exports inside the plan's limits (docs/exports.md "Limits", "Quotas", "Fair sharing"):
// every export statement obeys its time-out (here 2 s, in that test only) and the plan's read budget;
// generated rows count against the per-export byte budget; a free key's heavy export never
// holds the worker an enterprise key's job needs; disk quotas per export, per key and per
// plan, checked before anything is written; the free disk minus the ingest reserve.
import { statfsSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/api-key.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;

type Job = { id: string; status: string; progress: number; error: string | null; rowsWritten: number; files: { name: string; bytes: number }[] };

beforeAll(async () => {
  t = await startApp({ EXPORT_MAX_ROWS_FREE: '1000000', EXPORT_MAX_JOBS_FREE: '2' });
  const report = await ingest(t.services, await demoRecords(t.services, 3000));
  expect(report.rejected).toEqual([]);
});
afterAll(async () => t.cleanup());

/** Each key's owner, so jobs are polled through the service (polling over HTTP would spend a free key's rate limit). */
const owners = new Map<string, { id: string; plan: 'free' | 'enterprise' }>();
async function key(plan: 'free' | 'enterprise', name: string): Promise<Record<string, string>> {
  const k = await createKey(t.app, plan, name);
  owners.set(k.key, { id: k.id, plan });
  return { 'x-api-key': k.key };
}
const post = (url: string, headers: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const read = async (id: string, headers: Record<string, string>): Promise<Job> => t.services.exports.get(owners.get(headers['x-api-key']!)!, id) as Job;

async function start(url: string, headers: Record<string, string>, body: unknown): Promise<string> {
  const r = await post(url, headers, body);
  expect(r.statusCode, r.body).toBe(202);
  return r.json<Job>().id;
}

/** Polls until a job is done: no count of polls, so a busy machine only makes it wait longer (the test's time-out bounds it). */
async function waitJob(id: string, headers: Record<string, string>): Promise<Job> {
  for (;;) {
    const job = await read(id, headers);
    if (!['QUEUED', 'RUNNING'].includes(job.status)) return job;
    await new Promise((res) => setTimeout(res, 25));
  }
}

/** Bytes under a job's directory, sampled while it runs: the most it ever held. */
function watchDir(id: string): () => number {
  const dir = path.join(t.services.config.exports.dir, 'files', id);
  let largest = 0;
  const size = (): number => {
    try {
      return readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
    } catch {
      return 0;
    }
  };
  const timer = setInterval(() => (largest = Math.max(largest, size())), 2);
  return () => {
    clearInterval(timer);
    return Math.max(largest, size());
  };
}

// 1.3 billion hashes over 64M pairs of generated rows: within the free plan's join output
// (100M), no table read, seconds of one core, little memory (pairs come in small blocks).
const SLOW =
  'SELECT count() AS n FROM (SELECT arrayJoin(range(8000)) AS a) AS l CROSS JOIN (SELECT arrayJoin(range(8000)) AS b) AS r WHERE arraySum(arrayMap(x -> cityHash64(a, b, x) % 2, range(20))) > 100';

describe('time and read budgets per statement', () => {
  it('fails a SQL export whose statement passes the SQL time-out, naming the limit per statement', async () => {
    // Two seconds for this test only: the other tests' statements must not meet a time-out
    // however busy the machine is (a time-out is a wall-clock outcome; SLOW only runs longer).
    const cfg = t.services.config.exports;
    const saved = cfg.statementTimeoutSeconds;
    cfg.statementTimeoutSeconds = 2;
    try {
      const h = await key('free', 'slow');
      const job = await waitJob(await start('/v1/query/exports', h, { query: SLOW, format: 'CSV' }), h);
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/ran longer than the 2 s limit of one export statement/);
      expect(job.files).toEqual([]);
    } finally {
      cfg.statementTimeoutSeconds = saved;
    }
  });

  it("counts generated rows against the plan's bytes per export before writing any (no table read)", async () => {
    const h = await key('free', 'generator');
    const quotas = t.services.config.exports.quotas;
    const saved = quotas.jobBytes.free;
    quotas.jobBytes.free = 1_000_000;
    try {
      const id = await start('/v1/query/exports', h, { query: "SELECT repeat('x', 10000) AS pad FROM (SELECT arrayJoin(range(1000)))", format: 'JSONL' });
      const largest = watchDir(id);
      const job = await waitJob(id, h);
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/^this export would hold about \d+ bytes; the free plan allows 1000000 bytes per export/);
      expect(largest()).toBe(0);
    } finally {
      quotas.jobBytes.free = saved;
    }
  });
});

describe('disk quotas', () => {
  it("checks a filter export's first chunk before writing it", async () => {
    const cfg = t.services.config.exports;
    const h = await key('enterprise', 'first-chunk');
    const saved = cfg.diskBudgetBytes;
    cfg.diskBudgetBytes = heldBytes() + 20_000;
    try {
      const id = await start('/v1/exports', h, { format: 'JSONL' });
      const largest = watchDir(id);
      const job = await waitJob(id, h);
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/^the export disk budget is used up: this export \(about \d+ bytes\) would take export files to \d+ bytes of the \d+ allowed/);
      expect(largest()).toBe(0);
    } finally {
      cfg.diskBudgetBytes = saved;
    }
  });

  it('holds each key to its quota and each plan to its share: a full free key stops neither another key nor an enterprise export', async () => {
    const cfg = t.services.config.exports;
    const saved = { key: cfg.quotas.keyBytes.free, share: cfg.quotas.planShare.free, budget: cfg.diskBudgetBytes };
    const one = await key('free', 'filler');
    const two = await key('free', 'neighbour');
    const ent = await key('enterprise', 'after-the-filler');
    const query = "SELECT repeat('y', 1000) AS pad FROM (SELECT arrayJoin(range(100)))"; // ~100 kB as CSV
    try {
      cfg.quotas.keyBytes.free = 250_000;
      const first = await waitJob(await start('/v1/query/exports', one, { query, format: 'CSV' }), one);
      const second = await waitJob(await start('/v1/query/exports', one, { query, format: 'CSV' }), one);
      expect([first.status, second.status]).toEqual(['COMPLETED', 'COMPLETED']);
      const third = await waitJob(await start('/v1/query/exports', one, { query, format: 'CSV' }), one);
      expect(third.status).toBe('FAILED');
      expect(third.error).toMatch(/^this API key's export files would hold about \d+ bytes; the free plan allows 250000 bytes per key/);
      // Once the key's files fill its quota, a new job is refused at once (it could only fail).
      cfg.quotas.keyBytes.free = keyHeld(one);
      const full = await post('/v1/query/exports', one, { query, format: 'CSV' });
      expect(full.statusCode, full.body).toBe(429);
      expect(full.json().message).toMatch(
        /^this API key's export files hold \d+ bytes of the \d+ the free plan allows; a new export can start when older ones expire/,
      );
      expect(Number(full.headers['retry-after'])).toBeGreaterThan(0);
      cfg.quotas.keyBytes.free = 250_000;
      // Another free key has a quota of its own.
      expect((await waitJob(await start('/v1/query/exports', two, { query, format: 'CSV' }), two)).status).toBe('COMPLETED');
      // The free plan's share of the budget is used up; the enterprise plan's is not.
      const held = heldBytes();
      cfg.diskBudgetBytes = held + 1_000_000;
      cfg.quotas.planShare.free = (held + 1000) / cfg.diskBudgetBytes;
      const refused = await waitJob(await start('/v1/query/exports', two, { query, format: 'CSV' }), two);
      expect(refused.status).toBe('FAILED');
      expect(refused.error).toMatch(/^export files of all free-plan keys would hold about \d+ bytes; the free plan's share of the export disk is \d+ bytes/);
      const enterprise = await waitJob(await start('/v1/query/exports', ent, { query, format: 'CSV' }), ent);
      expect(enterprise.status, enterprise.error ?? '').toBe('COMPLETED');
    } finally {
      cfg.quotas.keyBytes.free = saved.key;
      cfg.quotas.planShare.free = saved.share;
      cfg.diskBudgetBytes = saved.budget;
    }
  });

  it('keeps the ingest reserve free on the disk holding export files', async () => {
    const cfg = t.services.config.exports;
    const h = await key('enterprise', 'reserve');
    const saved = cfg.ingestReserveBytes;
    const s = statfsSync(cfg.dir);
    cfg.ingestReserveBytes = s.bavail * s.bsize - 10_000;
    try {
      const job = await waitJob(
        await start('/v1/query/exports', h, { query: "SELECT repeat('z', 1000) AS pad FROM (SELECT arrayJoin(range(1000)))", format: 'CSV' }),
        h,
      );
      expect(job.status).toBe('FAILED');
      expect(job.error).toMatch(/^the disk holding export files has \d+ bytes free and keeps \d+ of them for ingest \(EXPORT_INGEST_RESERVE_BYTES\)/);
    } finally {
      cfg.ingestReserveBytes = saved;
    }
  });
});

describe('fair sharing of export workers', () => {
  it("runs an enterprise key's small job while a free key's long export is still running", async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.fileMaxRows;
    cfg.fileMaxRows = 10; // hundreds of chunks: a long job
    const free = await key('free', 'heavy');
    const ent = await key('enterprise', 'light');
    try {
      const heavy = await start('/v1/exports', free, { format: 'PARQUET' });
      while ((await read(heavy, free)).status !== 'RUNNING') await new Promise((r) => setTimeout(r, 10));
      // A worker is kept for paid plans: the enterprise job starts at once, beside the free
      // one (both running), it does not queue. Asserted on the scheduler's state when the job
      // is created, not on which of the two finishes first (that is the machine's speed).
      const created = await post('/v1/query/exports', ent, { query: 'SELECT signature FROM transactions LIMIT 5', format: 'CSV' });
      expect(created.statusCode, created.body).toBe(202);
      expect(created.json<Job>().status).toBe('RUNNING');
      expect(t.services.exports.stats()).toEqual({ running: 2, queued: 0 });
      const light = await waitJob(created.json<Job>().id, ent);
      expect(light.status, light.error ?? '').toBe('COMPLETED');
      const done = await waitJob(heavy, free);
      expect(done.status, done.error ?? '').toBe('COMPLETED');
    } finally {
      cfg.fileMaxRows = saved;
    }
  });

  it('gives a second key of the same plan a worker: a key holding every worker yields at a chunk boundary', async () => {
    const cfg = t.services.config.exports;
    const saved = cfg.fileMaxRows;
    cfg.fileMaxRows = 10;
    const greedy = await key('enterprise', 'greedy');
    const polite = await key('enterprise', 'polite');
    try {
      const jobs = [];
      for (let i = 0; i < cfg.workers; i++) jobs.push(await start('/v1/exports', greedy, { format: 'PARQUET' }));
      expect(t.services.exports.stats()).toEqual({ running: cfg.workers, queued: 0 });
      // Every worker is taken: the job queues, and gets one when a greedy job reaches its next chunk.
      const created = await post('/v1/query/exports', polite, { query: 'SELECT signature FROM transactions LIMIT 5', format: 'CSV' });
      expect(created.json<Job>().status).toBe('QUEUED');
      const light = await waitJob(created.json<Job>().id, polite);
      expect(light.status, light.error ?? '').toBe('COMPLETED');
      const states = await Promise.all(jobs.map(async (id) => (await read(id, greedy)).status));
      expect(
        states.some((s) => s === 'QUEUED' || s === 'RUNNING'),
        states.join(),
      ).toBe(true);
      for (const id of jobs) expect((await waitJob(id, greedy)).status).toBe('COMPLETED');
    } finally {
      cfg.fileMaxRows = saved;
    }
  });
});

/** Bytes of a key's unexpired export files, as its jobs list them. */
function keyHeld(headers: Record<string, string>): number {
  return t.services.exports.list(owners.get(headers['x-api-key']!)!, { first: 100 }).jobs.reduce((a, j) => a + j.files.reduce((b, f) => b + f.bytes, 0), 0);
}

function heldBytes(): number {
  const root = path.join(t.services.config.exports.dir, 'files');
  if (!existsSync(root)) return 0;
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !['manifest.json', 'README.md'].includes(e.name))
    .reduce((n, e) => n + statSync(path.join(e.parentPath, e.name)).size, 0);
}
