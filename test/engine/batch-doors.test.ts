// Issue 35: one batch executor (api/services/answers/answer-batch.ts) for every door that takes batches.
// The same batch through JSON-RPC and MCP refuses the same members for the budget, stays within
// the door's answer budget (MCP used to build 100 answers and let the edge cut the whole POST),
// and records one usage row per call that ran (MCP recorded a cut batch as one POST).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Budget } from '../../core/budget.ts';
import { RPC_RESPONSE_BUDGET_BYTES } from '../../core/limits/answers.ts';
import { createKey } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  t = await startApp();
  // Enough records that one getTransactions {limit: 10000} answer is about 3 MB.
  await ingestDemo(t.services, 13_000);
});
afterAll(async () => t?.cleanup());

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Calls of a batch as [method, first param]; the same on both doors. */
type Member = [string, Record<string, unknown>];

const members: Member[] = [
  ...Array.from({ length: 14 }, (): Member => ['getTransactions', { limit: 10_000 }]),
  ['getProtocols', {}],
  ['getTransactions', { limit: 10_001 }],
  ['getTransactions', { limit: 5 }],
];

const rpcBody = (ms: Member[]) => ms.map(([method, options], i) => ({ jsonrpc: '2.0', id: i, method, params: method === 'getProtocols' ? [] : [options] }));
const mcpBody = (ms: Member[]) =>
  ms.map(([name, options], i) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: { name, arguments: name === 'getProtocols' ? {} : { options } },
  }));

/** What a door said of each member: 'ok', or the error's machine code. */
interface Outcomes {
  each: string[];
  bytes: number;
}

async function viaRpc(key: string, ms: Member[]): Promise<Outcomes> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/rpc',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    payload: JSON.stringify(rpcBody(ms)),
  });
  expect(res.statusCode).toBe(200);
  const answers = res.json<{ id: number; result?: unknown; error?: { code: number; data?: string } }[]>();
  expect(answers.map((a) => a.id)).toEqual(ms.map((_, i) => i));
  return {
    bytes: Buffer.byteLength(res.body),
    each: answers.map((a) =>
      a.error === undefined
        ? 'ok'
        : /past its .* budget/.test(a.error.data ?? '')
          ? 'ERR_RESPONSE_TOO_LARGE'
          : a.error.code === -32602
            ? 'ERR_INVALID_PARAMS'
            : String(a.error.code),
    ),
  };
}

async function viaMcp(key: string, ms: Member[]): Promise<Outcomes> {
  const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': key }, payload: JSON.stringify(mcpBody(ms)) });
  expect(res.statusCode).toBe(200);
  // A batch of one is answered as one object (as the SDK's transport answers it).
  const answers = [res.json<{ id: number; result: { isError?: boolean; content: { text: string }[]; _meta?: Record<string, { code: string }> } }[]>()].flat();
  expect(answers.map((a) => a.id)).toEqual(ms.map((_, i) => i));
  // Its content: each answer's text as JSON-RPC carries it (MCP carries it escaped, in a string).
  const content = answers.reduce((n, a) => n + Buffer.byteLength(a.result.content[0]!.text), 0);
  return { bytes: content, each: answers.map((a) => (a.result.isError === true ? a.result._meta!['txa/error']!.code : 'ok')) };
}

/** Requests and errors of a usage row `method requests errors` (a method may hold spaces: "(invalid tool call)"). */
const counts = (row: string): { requests: number; errors: number } => {
  const [requests, errors] = row.split(' ').slice(-2).map(Number);
  return { requests: requests!, errors: errors! };
};

/** A key's usage as `method requests errors`, once the recorder has flushed. */
async function usageOf(keyId: string, iface: string): Promise<string[]> {
  await t.services.access.usage.flush();
  const rows = await t.services.access.usageStore.query({ keyId, fromMs: Date.now() - 3_600_000, toMs: Date.now() + 60_000, granularity: 'hour' });
  return rows
    .filter((r) => r.interface === iface)
    .map((r) => `${r.method} ${r.requests} ${r.errors}`)
    .sort();
}

describe('the same batch on JSON-RPC and MCP', () => {
  it('refuses the same members for the budget, answers within it, and records the same usage', async () => {
    const rpcKey = await createKey(t.app, 'enterprise', 'batch-rpc');
    const mcpKey = await createKey(t.app, 'enterprise', 'batch-mcp');
    const rpc = await viaRpc(rpcKey.key, members);
    const mcp = await viaMcp(mcpKey.key, members);
    expect(mcp.each).toEqual(rpc.each);
    // Whole answers while the budget holds them, then every member after is refused for it.
    const first = rpc.each.indexOf('ERR_RESPONSE_TOO_LARGE');
    expect(first).toBeGreaterThanOrEqual(5);
    expect(rpc.each.slice(0, first).every((e) => e === 'ok')).toBe(true);
    expect(rpc.each.slice(first).every((e) => e === 'ERR_RESPONSE_TOO_LARGE')).toBe(true);
    expect(rpc.bytes).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
    expect(mcp.bytes).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
    const errors = rpc.each.filter((e) => e !== 'ok').length;
    const listings = members.filter(([m]) => m === 'getTransactions').length;
    expect(await usageOf(rpcKey.id, 'rpc')).toEqual(['getProtocols 1 1', `getTransactions ${listings} ${errors - 1}`]);
    expect(await usageOf(mcpKey.id, 'mcp')).toEqual(['getProtocols 1 1', `getTransactions ${listings} ${errors - 1}`]);
  });

  const CORPUS = (
    JSON.parse(readFileSync(new URL('../fixtures/hostile-batches.json', import.meta.url), 'utf8')) as { cases: { name: string; members: Member[] }[] }
  ).cases;
  for (const c of CORPUS) {
    it(`corpus (test/fixtures/hostile-batches.json): ${c.name}`, async () => {
      const rpcKey = await createKey(t.app, 'enterprise', `corpus-rpc-${c.name.slice(0, 40)}`);
      const mcpKey = await createKey(t.app, 'enterprise', `corpus-mcp-${c.name.slice(0, 40)}`);
      const rpc = await viaRpc(rpcKey.key, c.members);
      const mcp = await viaMcp(mcpKey.key, c.members);
      expect(mcp.each).toEqual(rpc.each);
      expect(rpc.bytes).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
      expect(mcp.bytes).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES);
      // Past the first member refused for the budget, none is answered.
      const first = rpc.each.indexOf('ERR_RESPONSE_TOO_LARGE');
      if (first >= 0) expect(rpc.each.slice(first).filter((e) => e === 'ok')).toEqual([]);
      const rows = (await usageOf(rpcKey.id, 'rpc')).reduce((n, r) => n + counts(r).requests, 0);
      expect(rows).toBe(c.members.length);
      expect((await usageOf(mcpKey.id, 'mcp')).reduce((n, r) => n + counts(r).requests, 0)).toBe(c.members.length);
    });
  }

  it('a lone call past the budget is refused the same way on both doors, and small calls are answered', async () => {
    const key = await createKey(t.app, 'free', 'batch-small');
    const small: Member[] = [
      ['getTransactions', { limit: 5 }],
      ['getProtocols', {}],
      ['getTransactions', { limit: 0 }],
    ];
    const rpc = await viaRpc(key.key, small);
    expect(rpc.each.slice(0, 2)).toEqual(['ok', 'ok']);
    expect((await viaMcp(key.key, small)).each).toEqual(rpc.each);
  });

  it('an abandoned MCP batch records every call, and no call starts once its client is gone', async () => {
    const key = await createKey(t.app, 'enterprise', 'batch-gone');
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const abort = new AbortController();
    const sent = fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'x-api-key': key.key },
      body: JSON.stringify(mcpBody(members.slice(0, 10).concat(members.slice(0, 10)))),
      signal: abort.signal,
    });
    // Gone once its first calls run.
    setTimeout(() => abort.abort(), 150);
    await sent.catch(() => undefined);
    let rows: string[] = [];
    for (let i = 0; i < 100 && rows.reduce((n, r) => n + counts(r).requests, 0) < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await usageOf(key.id, 'mcp');
    }
    // Twenty calls, twenty rows: those that ran, and those refused once the client was gone.
    expect(rows.reduce((n, r) => n + counts(r).requests, 0)).toBe(20);
    const errors = rows.reduce((n, r) => n + counts(r).errors, 0);
    expect(errors).toBeGreaterThan(0);
  });

  // Issue 35 review: a cancellation answered the cancelled call's POST at once (202), which gave
  // back its key's in-flight slot and its answer bytes while the call ran on (the embedded
  // engine cannot stop a running statement), and a call waiting for its key's SQL turn still
  // ran once its turn came: a key could have more calls running than its slots.
  it('a cancelled MCP call leaves the SQL queue at once; one already running keeps its slot and answer bytes until it ends', async () => {
    const key = await createKey(t.app, 'free', 'batch-cancel');
    const { access, sqlSandbox } = t.services;
    const slow = 'SELECT sum(cityHash64(signature, number)) AS h FROM transactions ARRAY JOIN range(20000) AS number';
    const post = (body: unknown) =>
      t.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': key.key }, payload: JSON.stringify(body) });
    const callOf = (id: number) => post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_sql', arguments: { query: slow } } });
    const cancelOf = (id: number) => post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
    };
    const running = callOf(7);
    await until(() => sqlSandbox.stats().running === 1);
    const waiting = callOf(8);
    await until(() => sqlSandbox.stats().waiting === 1);
    expect(sqlSandbox.stats()).toEqual({ running: 1, waiting: 1 });
    // Cancelled while it waits for its turn: it leaves the queue, and never runs.
    expect((await cancelOf(8)).statusCode).toBe(202);
    expect((await waiting).statusCode).toBe(202);
    expect(sqlSandbox.stats()).toEqual({ running: 1, waiting: 0 });
    // Cancelled while it runs: its POST is answered, but until its statement has ended the call
    // still holds what it held.
    expect((await cancelOf(7)).statusCode).toBe(202);
    expect((await running).statusCode).toBe(202);
    let ended = false;
    for (let i = 0; i < 2000 && !ended; i++) {
      ended = sqlSandbox.stats().running === 0;
      if (ended) break;
      expect(access.inFlight.inFlight(key.id)).toBe(1);
      expect(access.answerMemory.heldBy('free')).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(ended).toBe(true);
    await until(() => access.inFlight.inFlight(key.id) === 0 && access.answerMemory.heldBy('free') === 0);
    expect(access.inFlight.inFlight(key.id)).toBe(0);
    expect(access.answerMemory.heldBy('free')).toBe(0);
    const next = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'run_sql', arguments: { query: 'SELECT 1 AS one' } } });
    expect(JSON.parse(next.body).result.isError).toBeUndefined();
  });

  it("a coalesced point read is not capped by its first asker's reservation (it serves other requests too)", async () => {
    const key = await createKey(t.app, 'enterprise', 'point-reads');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      payload: JSON.stringify(rpcBody([['getTransactions', { limit: 40 }]])),
    });
    const signatures = res.json<{ result: { data: { signature: string }[] } }[]>()[0]!.result.data.map((r) => r.signature);
    expect(signatures).toHaveLength(40);
    // Members reserved 100 bytes each: less than one record. Their lookups share reads.
    const found = await Promise.all(signatures.map((s) => t.services.analytics.under(new Budget('enterprise', 'rpc').member(100)).transaction(s)));
    expect(found.map((f) => f?.signature)).toEqual(signatures);
  });
});
