// Hostile input to the export routes: the corpus in test/fixtures/hostile-exports.json,
// where every case gets its 4xx naming the field at fault, never a 5xx, and creates no job.
// Download cases name staged jobs and links by placeholder (see the corpus's description):
// the test's own completed job, another key's, and links minted for a key since revoked,
// for a key whose account was since disabled, and one already expired.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, apiKeyHeaders, createKey } from './support/api-key.ts';
import { call, signUp } from './support/dashboard-session.ts';
import { demoRecords, ingest } from './support/fixtures.ts';
import { startApp } from './support/services.ts';

interface Case {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  expect: { status: number; message?: string; contentRange?: string; bytes?: number | string };
}

interface Job {
  id: string;
  status: string;
  files: { name: string; url: string; bytes: number }[];
}

const CASES = (JSON.parse(readFileSync(new URL('./fixtures/hostile-exports.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
/** Added to the export clock: minting a link "two hours ago" makes it an expired one. */
let clockOffset = 0;
const staged: Record<string, string> = {};

async function completedJob(h: Record<string, string>): Promise<Job> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/exports', headers: { ...h, 'content-type': 'application/json' }, payload: { format: 'CSV', columns: ['signature', 'fee'] } });
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

beforeAll(async () => {
  t = await startApp({}, { exportClock: () => Date.now() + clockOffset });
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

/** A staged value in place of each {name} of the text. */
const fill = (text: string): string => text.replace(/\{(\w+)\}/g, (m, name: string) => staged[name] ?? m);

describe('hostile export requests', () => {
  it('has a corpus', () => expect(CASES.length).toBeGreaterThan(50));

  for (const c of CASES) {
    it(`${c.name}: ${c.expect.status}`, async () => {
      const res = await t.app.inject({
        method: c.method,
        url: fill(c.url),
        headers: { ...(c.method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers), ...Object.fromEntries(Object.entries(c.headers ?? {}).map(([k, v]) => [k, fill(v)])) },
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
      expect(t.services.exports.stats()).toEqual({ running: 0, queued: 0 });
    });
  }
});
