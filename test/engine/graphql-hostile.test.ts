// Hostile input to GraphQL (/graphql): every case of test/fixtures/hostile-graphql.json gets
// its expected status and error code, never a 5xx, a stack trace, engine internals or an
// error log line; every error carries a code of the catalog.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../core/errors.ts';
import { GRAPHQL_RESPONSE_BUDGET_BYTES } from '../../core/limits/graphql.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

interface Case {
  name: string;
  query?: string;
  variables?: unknown;
  operationName?: string;
  body?: unknown;
  raw?: string;
  method?: 'GET' | 'PUT';
  url?: string;
  /** Headers sent besides the key, accept and content-type. */
  headers?: Record<string, string>;
  expect: { status: number; code?: string; message?: string };
}

const CASES = (JSON.parse(readFileSync(new URL('../fixtures/hostile-graphql.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;
const CODES = new Set(Object.values(Errors).map((k) => k.graphql));
const log = captureLog('warn');

let ctx: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  ctx = await startApp({}, { logger: log.logger });
  headers = { ...(await apiKeyHeaders(ctx.app)), accept: 'application/graphql-response+json' };
  await ingestDemo(ctx.services, 500);
});
afterAll(async () => ctx?.cleanup());

function send(c: Case) {
  if (c.method !== undefined) return ctx.app.inject({ method: c.method, url: c.url!, headers });
  const payload = c.raw ?? JSON.stringify(c.body ?? { query: c.query, variables: c.variables, operationName: c.operationName });
  return ctx.app.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json', ...c.headers }, payload });
}

describe('hostile GraphQL corpus (test/fixtures/hostile-graphql.json)', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const before = log.text().length;
    const res = await send(c);
    expect(res.statusCode, res.body.slice(0, 400)).toBe(c.expect.status);
    expect(Buffer.byteLength(res.body), 'bytes bounded').toBeLessThanOrEqual(GRAPHQL_RESPONSE_BUDGET_BYTES);
    expect(res.body).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|DB::Exception|Internal error/);
    if (c.expect.code !== undefined) {
      const body = res.json() as { errors?: { message: string; extensions: { code: string } }[] };
      expect(body.errors?.[0]?.extensions.code, res.body.slice(0, 400)).toBe(c.expect.code);
      for (const e of body.errors ?? []) expect(CODES).toContain(e.extensions.code);
      if (c.expect.message) expect(body.errors!.map((e) => e.message).join('\n')).toMatch(new RegExp(c.expect.message));
    }
    if (c.expect.status === 200 && c.expect.code === undefined) expect((res.json() as { errors?: unknown }).errors, res.body.slice(0, 400)).toBeUndefined();
    expect(log.text().slice(before)).not.toMatch(/"level":50/);
  });
});
