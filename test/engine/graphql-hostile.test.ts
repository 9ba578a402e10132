// Hostile input to GraphQL (/graphql): every case of test/fixtures/hostile-graphql.json and
// hostile-graphql-args.json (the open questions' arguments) gets its expected status and error
// code, never a 5xx, a stack trace, engine internals or an error log line; every error carries
// a code of the catalog. A case may answer as another request does (`sameAs`: a filter left
// out, a null, must not widen or narrow the answer), use a cursor minted by a request of its
// own (`{"$endCursor": query}` in its variables), or be skipped naming an open finding.
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
  expect: { status: number; code?: string; message?: string; sameAs?: { query: string; variables?: unknown } };
  /** An open finding's id and why: the case states what should happen, and is skipped until fixed. */
  skip?: string;
}

const corpus = (file: string) => (JSON.parse(readFileSync(new URL(`../fixtures/${file}`, import.meta.url), 'utf8')) as { cases: Case[] }).cases;
const CASES = [...corpus('hostile-graphql.json'), ...corpus('hostile-graphql-args.json')];
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

const post = (payload: string, extra: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json', ...extra }, payload });

/** The data a query answers (no errors). */
async function dataOf(query: string, variables?: unknown): Promise<Record<string, unknown>> {
  const res = await post(JSON.stringify({ query, variables }));
  const body = res.json() as { data?: Record<string, unknown>; errors?: unknown };
  expect(body.errors, `${query}: ${res.body.slice(0, 300)}`).toBeUndefined();
  return body.data!;
}

/** Variables with each `{"$endCursor": query}` replaced by the endCursor of the query's one connection. */
async function minted(v: unknown): Promise<unknown> {
  if (Array.isArray(v)) return Promise.all(v.map(minted));
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (typeof o.$endCursor === 'string') {
    const [connection] = Object.values(await dataOf(o.$endCursor)) as { pageInfo: { endCursor: string } }[];
    return connection!.pageInfo.endCursor;
  }
  return Object.fromEntries(await Promise.all(Object.entries(o).map(async ([k, x]) => [k, await minted(x)] as const)));
}

async function send(c: Case) {
  if (c.method !== undefined) return ctx.app.inject({ method: c.method, url: c.url!, headers });
  const payload = c.raw ?? JSON.stringify(c.body ?? { query: c.query, variables: await minted(c.variables), operationName: c.operationName });
  return post(payload, c.headers);
}

describe('hostile GraphQL corpus (test/fixtures/hostile-graphql.json)', () => {
  const open = CASES.filter((c) => c.skip !== undefined);
  if (open.length > 0) it.skip.each(open.map((c) => [`${c.name} (${c.skip})`] as const))('%s', () => {});
  it.each(CASES.filter((c) => c.skip === undefined).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
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
    if (c.expect.sameAs !== undefined) {
      expect((res.json() as { data?: unknown }).data, 'answers as its sameAs request').toEqual(await dataOf(c.expect.sameAs.query, c.expect.sameAs.variables));
    }
    expect(log.text().slice(before)).not.toMatch(/"level":50/);
  });
});
