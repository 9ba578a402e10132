// Hostile input to this session's new doors (POST /mcp, GET /v1/metrics, SQL executions, CORS
// preflights, REST transaction cursors, /graphql and /graphql/stream arguments): the corpus in
// test/fixtures/hostile-boundaries.json. Every case gets its expected status, never a 5xx, a
// stack trace, engine internals or an error log line; REST errors are exactly {error, message},
// MCP errors a JSON-RPC error other than -32603 (internal).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { startApp } from '../support/services.ts';
import { ingestDemo } from '../support/fixtures.ts';

interface Case {
  name: string;
  method: string;
  url: string;
  /** Whose key: valid (default), other, revoked, none, admin (the operator token), bearer (the valid key as Authorization: Bearer). */
  key?: 'valid' | 'other' | 'revoked' | 'none' | 'admin' | 'bearer';
  headers?: Record<string, string>;
  json?: unknown;
  raw?: string;
  /** maxBytes: the answer's length bound (no input is echoed back whole). */
  expect: { status: number; message?: string; rpcCode?: number; rpcMessage?: string; maxBytes?: number };
}

const CASES = (JSON.parse(readFileSync(new URL('../fixtures/hostile-boundaries.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;
const log = captureLog('warn');
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

let ctx: Awaited<ReturnType<typeof startApp>>;
const keys: Record<string, string> = {};
const ids: Record<string, string> = {};

beforeAll(async () => {
  ctx = await startApp({}, { logger: log.logger });
  await ingestDemo(ctx.services, 200);
  keys.valid = (await createKey(ctx.app, 'enterprise', 'hostile-valid')).key;
  keys.other = (await createKey(ctx.app, 'enterprise', 'hostile-other')).key;
  const revoked = await createKey(ctx.app, 'free', 'hostile-revoked');
  keys.revoked = revoked.key;
  await ctx.app.inject({ method: 'POST', url: `/admin/keys/${revoked.id}/revoke`, headers: adminHeaders() });
  // An execution of the other key: its id must be as unknown to the valid key as a forged one.
  const started = await ctx.app.inject({
    method: 'POST',
    url: '/v1/query/executions',
    headers: { 'x-api-key': keys.other },
    payload: { query: 'SELECT 1 AS one' },
  });
  ids.otherExec = started.json<{ id: string }>().id;
  const own = await ctx.app.inject({
    method: 'POST',
    url: '/v1/query/executions',
    headers: { 'x-api-key': keys.valid },
    payload: { query: 'SELECT 1 AS one' },
  });
  ids.ownExec = own.json<{ id: string }>().id;
  // A results cursor of an execution of many rows, to be sent to another execution.
  const many = await ctx.app.inject({
    method: 'POST',
    url: '/v1/query/executions',
    headers: { 'x-api-key': keys.valid },
    payload: { query: 'SELECT signature FROM transactions' },
  });
  ids.manyExec = many.json<{ id: string }>().id;
  for (let i = 0; i < 200; i++) {
    const state = (await ctx.app.inject({ method: 'GET', url: `/v1/query/executions/${ids.manyExec}`, headers: { 'x-api-key': keys.valid } })).json<{
      state: string;
    }>().state;
    if (state === 'COMPLETED') break;
    // Polls are limited per key (EXECUTION_POLLS_PER_MINUTE): back off to a quarter second.
    await new Promise((r) => setTimeout(r, Math.min(250, 25 * 2 ** Math.min(i, 4))));
  }
  const first = await ctx.app.inject({ method: 'GET', url: `/v1/query/executions/${ids.manyExec}/results?limit=1`, headers: { 'x-api-key': keys.valid } });
  ids.execCursor = first.json<{ nextCursor: string }>().nextCursor;
  // A REST cursor this key was issued, and the same cursor with its position tampered with.
  const page = await ctx.app.inject({ method: 'GET', url: '/api/v1/transactions?limit=2', headers: { 'x-api-key': keys.valid } });
  ids.restCursor = page.json<{ meta: { next: string } }>().meta.next;
  const decoded = JSON.parse(Buffer.from(ids.restCursor, 'base64url').toString()) as unknown[];
  decoded[1] = Number(decoded[1]) + 1;
  ids.tamperedRestCursor = Buffer.from(JSON.stringify(decoded)).toString('base64url');
});
afterAll(async () => ctx?.cleanup());

/** {{repeat:TEXT:N}} is TEXT N times; {{otherExec}} / {{ownExec}} are execution ids. */
const expandText = (s: string): string =>
  s.replace(/\{\{repeat:(.*?):(\d+)\}\}/g, (_m, t: string, n: string) => t.repeat(Number(n))).replace(/\{\{(\w+)\}\}/g, (_m, k: string) => ids[k] ?? k);

/** {"$nest": {depth, leaf}} is leaf wrapped in depth arrays; {"$repeat": [text, n]} a long string. */
function expand(v: unknown): unknown {
  if (typeof v === 'string') return expandText(v);
  if (Array.isArray(v)) return v.map(expand);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (o.$nest !== undefined) {
    const { depth, leaf } = o.$nest as { depth: number; leaf: unknown };
    let x: unknown = expand(leaf);
    for (let i = 0; i < depth; i++) x = [x];
    return x;
  }
  if (o.$times !== undefined) {
    const { of, count } = o.$times as { of: unknown; count: number };
    return Array.from({ length: count }, () => expand(of));
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, expand(x)]));
}

function headersOf(c: Case): Record<string, string> {
  const h: Record<string, string> = c.url.startsWith('/mcp') ? { ...MCP_HEADERS } : {};
  if (c.json !== undefined) h['content-type'] = 'application/json';
  const who = c.key ?? 'valid';
  if (who === 'admin') h.authorization = adminHeaders().authorization!;
  else if (who === 'bearer') h.authorization = `Bearer ${keys.valid}`;
  else if (who !== 'none') h['x-api-key'] = keys[who]!;
  for (const [k, v] of Object.entries(c.headers ?? {})) h[k] = expandText(v.replace('<valid key>', keys.valid!));
  return h;
}

describe('hostile corpus of the new doors (test/fixtures/hostile-boundaries.json)', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const before = log.text().length;
    const payload = c.raw !== undefined ? expandText(c.raw) : c.json !== undefined ? JSON.stringify(expand(c.json)) : undefined;
    const res = await ctx.app.inject({
      method: c.method as 'GET',
      url: expandText(c.url),
      headers: headersOf(c),
      ...(payload !== undefined ? { payload } : {}),
    });
    if (process.env.HOSTILE_EXPLORE) console.log(`${c.name} => ${res.statusCode} ${res.body.slice(0, 200)}`);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(c.expect.status);
    expect(res.body).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|DB::Exception|Internal error/);
    expect(log.text().slice(before)).not.toMatch(/"level":50/);
    if (c.expect.maxBytes !== undefined) expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(c.expect.maxBytes);
    if (res.statusCode < 400 && c.expect.rpcCode === undefined) return;
    if (c.url.startsWith('/mcp') && res.headers['content-type']?.toString().includes('json') && /"jsonrpc"/.test(res.body)) {
      const json = res.json() as { error?: { code: number; message: string } } | { error?: { code: number } }[];
      for (const a of Array.isArray(json) ? json : [json]) expect(a.error?.code).not.toBe(-32603);
      if (c.expect.rpcCode !== undefined) expect((json as { error?: { code: number } }).error?.code, res.body.slice(0, 300)).toBe(c.expect.rpcCode);
      if (c.expect.rpcMessage !== undefined) expect(res.body).toMatch(new RegExp(c.expect.rpcMessage));
      return;
    }
    if (res.statusCode >= 400) {
      const body = res.json() as { error: string; message: string };
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      if (c.expect.message !== undefined) expect(body.message).toMatch(new RegExp(c.expect.message));
    }
  });
});

describe('key-less preflights cost no engine work', () => {
  it('200 preflights with bodies on every door never reach the warehouse', async () => {
    const calls = async (): Promise<number> => {
      const m = await ctx.services.metrics.registry.getSingleMetric('txa_warehouse_query_duration_seconds')!.get();
      return m.values.filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count')).reduce((n, v) => n + v.value, 0);
    };
    const paths = [
      '/mcp',
      '/v1/metrics',
      '/v1/query/executions',
      '/v1/query/executions/x/results',
      '/api/v1/transactions',
      '/graphql',
      '/graphql/stream',
      '/v1/rpc',
      '/v1/query',
    ];
    const beforeCalls = await calls();
    expect(beforeCalls, 'the set-up used the warehouse: the count is live').toBeGreaterThan(0);
    for (let i = 0; i < 200; i++) {
      const path = paths[i % paths.length]!;
      const res = await ctx.app.inject({
        method: 'OPTIONS',
        url: path,
        headers: { origin: `https://o${i}.example`, 'access-control-request-method': 'POST', 'content-type': 'application/json' },
        payload: JSON.stringify({ query: 'SELECT count() FROM transactions a, transactions b' }),
      });
      expect(res.statusCode, path).toBeLessThan(500);
    }
    expect(await calls()).toBe(beforeCalls);
  });
});

describe('a free key cannot buy unbounded work through the new doors', () => {
  it('holds one SQL execution at a time (429 for the next, naming the plan), and a 100-call MCP batch is refused whole by its rate limit', async () => {
    const free = (await createKey(ctx.app, 'free', 'hostile-free')).key;
    const heavy = { query: 'SELECT a.signature, b.signature FROM transactions a, transactions b' };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/query/executions', headers: { 'x-api-key': free }, payload: heavy });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json<{ message: string }>().message).toMatch(/plan free allows 1 queued or running/);
    }
    expect(statuses[0]).toBe(202);
    expect(statuses.slice(1).every((s) => s === 429 || s === 202)).toBe(true);
    expect(statuses.filter((s) => s === 202).length).toBeLessThan(5);
    const batch = Array.from({ length: 100 }, (_, id) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'run_sql', arguments: { query: 'SELECT count() FROM transactions a, transactions b' } },
    }));
    const res = await ctx.app.inject({ method: 'POST', url: '/mcp', headers: { 'x-api-key': free, ...MCP_HEADERS }, payload: JSON.stringify(batch) });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: 'Too Many Requests', message: expect.stringMatching(/^Rate limit exceeded: \d+ requests per minute for plan free/) });
  });
});
