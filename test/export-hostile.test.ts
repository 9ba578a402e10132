// Hostile input to the export routes: the corpus in test/fixtures/hostile-exports.json,
// where every case gets its 4xx naming the field at fault, never a 5xx, and creates no job.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from './support/api-key.ts';
import { demoRecords, ingest } from './support/fixtures.ts';
import { startApp } from './support/services.ts';

interface Case {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  raw?: string;
  expect: { status: number; message: string };
}

const CASES = (JSON.parse(readFileSync(new URL('./fixtures/hostile-exports.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app, 'enterprise');
  await ingest(t.services, await demoRecords(t.services, 200));
});
afterAll(async () => t.cleanup());

describe('hostile export requests', () => {
  it('has a corpus', () => expect(CASES.length).toBeGreaterThan(50));

  for (const c of CASES) {
    it(`${c.name}: ${c.expect.status}`, async () => {
      const res = await t.app.inject({
        method: c.method,
        url: c.url,
        headers: c.method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(c.method === 'POST' ? { payload: c.raw ?? JSON.stringify(c.body ?? null) } : {}),
      });
      expect(res.statusCode, res.body).toBe(c.expect.status);
      const body = res.json<{ error: string; message: string }>();
      expect(body.message).toMatch(new RegExp(c.expect.message));
      expect(t.services.exports.stats()).toEqual({ running: 0, queued: 0 });
    });
  }
});
