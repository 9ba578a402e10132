// Hostile input to the export routes: the corpus in test/fixtures/hostile-exports.json,
// where every case gets its 4xx naming the field at fault, never a 5xx, and creates no job;
// or, for requests that are valid but hostile in what they run (rows generated without a
// table, statements past the time-out, sequences filling a quota), a job that ends FAILED
// with a clear reason and never holds more than its quotas.
// Download cases name staged jobs and links by placeholder (see the corpus's description):
// the test's own completed job, another key's, and links minted for a key since revoked,
// for a key whose account was since disabled, and one already expired.
import { readFileSync } from 'node:fs';
import type { Plan } from '../../core/plans.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, apiKeyHeaders, createKey } from '../support/api-key.ts';
import { call, signUp } from '../support/dashboard-session.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

interface Case {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  /** Sent with a fresh key of this plan (else the test's enterprise key). */
  key?: 'free' | 'x402' | 'enterprise';
  /** Send the request this many times, one after the other, each job waited for (default 1). */
  repeat?: number;
  /** Fresh keys the repeats rotate over (default 1: all with the same key). */
  keys?: number;
  expect: {
    status: number;
    message?: string;
    contentRange?: string;
    bytes?: number | string;
    /** The job each request created, in order: its final status and a pattern of its error. */
    jobs?: { status: string; error?: string }[];
  };
}

interface Job {
  id: string;
  status: string;
  files: { name: string; url: string; bytes: number }[];
}

const CASES = (JSON.parse(readFileSync(new URL('../fixtures/hostile-exports.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
/** Added to the export clock: minting a link "two hours ago" makes it an expired one. */
let clockOffset = 0;
const staged: Record<string, string> = {};

async function completedJob(h: Record<string, string>): Promise<Job> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/exports',
    headers: { ...h, 'content-type': 'application/json' },
    payload: { format: 'CSV', columns: ['signature', 'fee'] },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json<Job>().id;
  for (let i = 0; i < 300; i++) {
    const job = (await t.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: h })).json<Job>();
    if (job.status === 'COMPLETED') return job;
    expect(['QUEUED', 'RUNNING']).toContain(job.status);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('export job did not complete');
}

/** Quotas of this corpus (bytes), small so that a few requests fill them. */
const QUOTAS = { freeJob: 2_000_000, freeKey: 3_000_000, freePlan: 5_000_000, budget: 50_000_000 };

beforeAll(async () => {
  t = await startApp({ SQL_TIMEOUT_SECONDS: '2' }, { exportClock: () => Date.now() + clockOffset });
  const cfg = t.services.config.exports;
  cfg.quotas.jobBytes.free = QUOTAS.freeJob;
  cfg.quotas.keyBytes.free = QUOTAS.freeKey;
  cfg.diskBudgetBytes = QUOTAS.budget;
  cfg.quotas.planShare.free = QUOTAS.freePlan / QUOTAS.budget;
  headers = await apiKeyHeaders(t.app, 'enterprise');
  await ingest(t.services, await demoRecords(t.services, 200));

  const own = await completedJob(headers);
  const file = own.files[0]!;
  Object.assign(staged, { job: own.id, file: file.name, link: file.url, bytes: String(file.bytes) });
  clockOffset = -2 * 3_600_000;
  staged.expiredLink = (await t.app.inject({ method: 'GET', url: `/v1/exports/${own.id}`, headers })).json<Job>().files[0]!.url;
  clockOffset = 0;

  const other = await createKey(t.app, 'enterprise', 'other');
  staged.otherJob = (await completedJob({ 'x-api-key': other.key })).id;

  const revoked = await createKey(t.app, 'enterprise', 'revoked');
  staged.revokedLink = (await completedJob({ 'x-api-key': revoked.key })).files[0]!.url;
  expect((await t.app.inject({ method: 'POST', url: `/admin/keys/${revoked.id}/revoke`, headers: adminHeaders() })).statusCode).toBe(200);

  const s = await signUp(t.app, 'exporter@example.com');
  const made = await call(t.app, s, 'POST', '/dashboard/api/keys', { name: 'exports', environment: 'production' });
  staged.disabledLink = (await completedJob({ 'x-api-key': made.json<{ key: string }>().key })).files[0]!.url;
  const disabled = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload: { status: 'disabled' } });
  expect(disabled.statusCode, disabled.body).toBe(200);
});
afterAll(async () => t.cleanup());

/** Poll a job through the service (a free key's rate limit is not spent on polls). */
async function finished(owner: { id: string; plan: Plan }, id: string): Promise<{ status: string; error: string | null }> {
  for (let i = 0; i < 2000; i++) {
    const job = t.services.exports.get(owner, id);
    if (job.status !== 'QUEUED' && job.status !== 'RUNNING') return job;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`job ${id} did not finish`);
}

/** Bytes of the files of every job the store holds, by key and by plan. */
function held(): { byKey: Map<string, number>; byPlan: Map<string, number>; total: number } {
  const byKey = new Map<string, number>();
  const byPlan = new Map<string, number>();
  let total = 0;
  for (const { id, plan } of seenOwners) {
    for (const j of t.services.exports.list({ id, plan }, { first: 100 }).jobs) {
      const bytes = j.files.reduce((a, f) => a + f.bytes, 0);
      byKey.set(id, (byKey.get(id) ?? 0) + bytes);
      byPlan.set(plan, (byPlan.get(plan) ?? 0) + bytes);
      total += bytes;
    }
  }
  return { byKey, byPlan, total };
}
const seenOwners: { id: string; plan: Plan }[] = [];

/** Expire every job (files deleted): each job case starts from empty quotas. */
function expireAll(): void {
  clockOffset = (t.services.config.exports.retentionHours * 3600 + 60) * 1000;
  t.services.exports.sweep();
  clockOffset = 0;
}

/** A staged value in place of each {name} of the text. */
const fill = (text: string): string => text.replace(/\{(\w+)\}/g, (m, name: string) => staged[name] ?? m);

describe('hostile export requests', () => {
  it('has a corpus', () => expect(CASES.length).toBeGreaterThan(50));

  for (const c of CASES) {
    it(`${c.name}: ${c.expect.status}${c.expect.jobs ? ` then ${c.expect.jobs.map((j) => j.status).join(', ')}` : ''}`, async () => {
      const owners: { id: string; plan: Plan; headers: Record<string, string> }[] = [];
      for (let k = 0; k < (c.key === undefined ? 0 : (c.keys ?? 1)); k++) {
        const made = await createKey(t.app, c.key!, `hostile-${k}`);
        owners.push({ id: made.id, plan: c.key!, headers: { 'x-api-key': made.key } });
        seenOwners.push({ id: made.id, plan: c.key! });
      }
      const runs = c.repeat ?? 1;
      for (let n = 0; n < runs; n++) {
        const own = owners.length === 0 ? headers : owners[n % owners.length]!.headers;
        const res = await t.app.inject({
          method: c.method,
          url: fill(c.url),
          headers: {
            ...(c.method === 'POST' ? { ...own, 'content-type': 'application/json' } : own),
            ...Object.fromEntries(Object.entries(c.headers ?? {}).map(([k, v]) => [k, fill(v)])),
          },
          ...(c.method === 'POST' ? { payload: c.raw ?? JSON.stringify(c.body ?? null) } : {}),
        });
        expect(res.statusCode, res.body.slice(0, 300)).toBe(c.expect.status);
        expect(res.body).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|DB::Exception/);
        if (c.expect.message !== undefined) {
          const body = res.json<{ error: string; message: string }>();
          expect(Object.keys(body).sort()).toEqual(['error', 'message']);
          expect(body.message).toMatch(new RegExp(c.expect.message));
        }
        if (c.expect.contentRange !== undefined) expect(res.headers['content-range']).toBe(fill(c.expect.contentRange));
        if (c.expect.bytes !== undefined) expect(res.rawPayload.length).toBe(Number(fill(String(c.expect.bytes))));
        const want = c.expect.jobs?.[n];
        if (want !== undefined) {
          const owner = owners[n % owners.length]!;
          const job = await finished(owner, res.json<{ id: string }>().id);
          expect(job.status, job.error ?? '').toBe(want.status);
          if (want.error !== undefined) expect(job.error ?? '').toMatch(new RegExp(want.error));
          // Never past a quota, whatever the request.
          const now = held();
          for (const o of owners.filter((x) => x.plan === 'free')) expect(now.byKey.get(o.id) ?? 0).toBeLessThanOrEqual(QUOTAS.freeKey);
          expect(now.byPlan.get('free') ?? 0).toBeLessThanOrEqual(QUOTAS.freePlan);
        }
      }
      if (c.expect.jobs !== undefined) expireAll();
      expect(t.services.exports.stats()).toEqual({ running: 0, queued: 0 });
    });
  }
});
