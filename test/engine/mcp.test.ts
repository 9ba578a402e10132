// The MCP door (POST /mcp) as an agent meets it: the official SDK's own client over HTTP
// against a listening server. Every tool is called with valid arguments (the answer equals
// the JSON-RPC method's, or /v1/query's) and with invalid ones (an MCP tool error with the
// same message the other door gives); keys are refused as on every door (401 without, 403
// revoked, cut off at once), batches count per call, and the resources describe the table
// and the protocols.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MISSING_KEY_MESSAGE_BEARER } from '../../api/services/access/presented-key.ts';
import { CATALOG, RPC_METHOD_NAMES } from '../../api/catalog/catalog.ts';
import { McpDoor, type CallHooks } from '../../api/doors/mcp/mcp-server.ts';
import type { ToolCaller } from '../../api/doors/mcp/mcp-tools.ts';
import { Budget } from '../../core/budget.ts';
import { PLAN_LIMITS } from '../../core/plans.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { FIXTURE_END, FIXTURE_START, HOT, hotRecords, ingest, ingestDemo } from '../support/fixtures.ts';
import { RpcClient } from '../support/rpc-client.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let base: string;
let rpc: RpcClient;
let key: string;
let client: Client;
let signature: string;
/** Signatures of different records, for calls that must each get their own answer. */
let signatures: string[];

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };

async function connect(headers: Record<string, string>, url = `${base}/mcp`): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}

const text = (r: ToolResult): string => {
  const first = r.content[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`no text content: ${JSON.stringify(r)}`);
  return first.text;
};

async function call(name: string, args: Record<string, unknown> = {}, c = client): Promise<ToolResult> {
  return (await c.callTool({ name, arguments: args })) as ToolResult;
}

/** A key's usage rows of the last hour, as `interface method requests`, once the recorder has flushed. */
async function recordedUsage(keyId: string): Promise<string[]> {
  await t.services.access.usage.flush();
  const rows = await t.services.access.usageStore.query({ keyId, fromMs: Date.now() - 3_600_000, toMs: Date.now() + 60_000, granularity: 'hour' });
  return rows.map((r) => `${r.interface} ${r.method} ${r.requests}`).sort();
}

/** recordedUsage once it holds at least `rows` rows (work whose client left ends on its own), within ~10 s. */
async function usageOnceRecorded(keyId: string, rows: number): Promise<string[]> {
  let got: string[] = [];
  for (let i = 0; i < 100 && got.length < rows; i++) {
    await new Promise((r) => setTimeout(r, 100));
    got = await recordedUsage(keyId);
  }
  return got;
}

beforeAll(async () => {
  t = await startApp();
  const records = await ingestDemo(t.services, 2000);
  await ingest(t.services, hotRecords());
  signature = records.find((r) => r.protocol_name === 'jupiter_v6')!.signature;
  signatures = [...new Set(records.map((r) => r.signature))].slice(0, 16);
  key = (await createKey(t.app, 'enterprise', 'mcp-test')).key;
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  rpc = await RpcClient.create(t.app);
  client = await connect({ 'x-api-key': key });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await t?.cleanup();
});

const range = { gte: FIXTURE_START, lte: FIXTURE_END - 1 };
const partial = { gte: FIXTURE_START + 1800, lte: FIXTURE_START + 86_400 + 900 };

/** Valid params of every JSON-RPC method, positional, with the tool's named arguments. */
function validCalls(): { method: string; params: unknown[] }[] {
  return [
    { method: 'getTransaction', params: [signature] },
    { method: 'getTransactions', params: [{ limit: 5, filters: { protocols: ['jupiter_v6'], blockTime: partial } }] },
    { method: 'getTransactions', params: [] },
    { method: 'getTransactionsForAddress', params: [HOT, { limit: 7, sortOrder: 'desc' }] },
    { method: 'getTransactionsForAddress', params: [HOT] },
    { method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6', blockTime: partial }] },
    { method: 'getProtocolComparison', params: [{ protocols: ['jupiter_v6', 'pump_fun'] }] },
    { method: 'getProtocolPerformance', params: [{ protocolName: 'whirlpool', blockTime: range }] },
    { method: 'getTopProtocols', params: [{ limit: 3, sortBy: 'fees' }] },
    { method: 'getProtocolActivity', params: [{ protocolName: 'pump_fun', blockTime: partial, interval: 'hour' }] },
    { method: 'getInstructionTypes', params: [{ limit: 5 }] },
    { method: 'getFailedTransactions', params: [{ limit: 3, blockTime: range }] },
    { method: 'getProtocols', params: [] },
  ];
}

/** Invalid params of every JSON-RPC method: a fault of each kind the check and the analytics layer raise. */
function invalidCalls(): { method: string; params: unknown[] }[] {
  return [
    { method: 'getTransaction', params: ['not-base58!'] },
    { method: 'getTransaction', params: [] },
    { method: 'getTransactions', params: [{ limit: 10_001 }] },
    { method: 'getTransactions', params: [{ filters: { protocols: ['no_such_protocol'] } }] },
    { method: 'getTransactionsForAddress', params: [HOT, { transactionDetails: 'some' }] },
    { method: 'getProtocolStats', params: [{ protocolName: 'no_such_protocol' }] },
    { method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6', blockTime: 'yesterday' }] },
    { method: 'getProtocolComparison', params: [{ protocols: [] }] },
    { method: 'getProtocolPerformance', params: [{ protocolName: 'raydium_amm_v4' }] },
    { method: 'getTopProtocols', params: [{ sortBy: 'volume' }] },
    { method: 'getProtocolActivity', params: [{ blockTime: { gte: 0, lte: 100_000_000 } }] },
    { method: 'getInstructionTypes', params: [{ limit: 0 }] },
    { method: 'getFailedTransactions', params: [{ extra: true }] },
  ];
}

/** A method's positional params as the tool's named arguments (the positions' names). */
function argsOf(method: string, params: readonly unknown[]): Record<string, unknown> {
  const op = CATALOG.find((o) => o.rpc?.method === method)!;
  return Object.fromEntries(params.map((p, i) => [op.rpc!.params[i]!.name, p]));
}

describe('MCP door', () => {
  it("lists one tool per JSON-RPC method with the catalog's schema and SPEC's words, plus run_sql, list_protocols and get_usage", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...RPC_METHOD_NAMES, 'run_sql', 'list_protocols', 'get_usage'].sort());
    for (const op of CATALOG.filter((o) => o.rpc !== undefined)) {
      const tool = tools.find((x) => x.name === op.rpc!.method)!;
      expect(tool.description).toContain(op.summary);
      expect(tool.inputSchema.type).toBe('object');
      expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(op.rpc!.params.map((p) => p.name));
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const stats = tools.find((x) => x.name === 'getProtocolStats')!;
    expect(JSON.stringify(stats.inputSchema)).toContain('"protocolName"');
    expect(stats.inputSchema.required).toEqual(['options']);
  });

  it('every catalog tool answers what its JSON-RPC method answers', async () => {
    for (const c of validCalls()) {
      const expected = await rpc.call(c.method, c.params);
      const r = await call(c.method, argsOf(c.method, c.params));
      expect(r.isError, `${c.method} ${text(r)}`).toBeFalsy();
      expect(JSON.parse(text(r)), c.method).toEqual(expected);
    }
  });

  it('invalid arguments are MCP tool errors with the message JSON-RPC gives', async () => {
    for (const c of invalidCalls()) {
      const expected = await rpc.error(c.method, c.params);
      const r = await call(c.method, argsOf(c.method, c.params));
      expect(r.isError, c.method).toBe(true);
      expect(text(r), c.method).toBe(expected.data);
    }
    const unknownArg = await call('getProtocols', { options: {} });
    expect(unknownArg.isError).toBe(true);
    expect(text(unknownArg)).toBe('options is not an argument of getProtocols (it takes none)');
    await expect(client.callTool({ name: 'getNothing', arguments: {} })).rejects.toThrow(/unknown tool "getNothing"/);
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    const tooDeep = await call('getTransactions', { options: { filters: { protocols: deep } } });
    expect(tooDeep.isError).toBe(true);
    expect(text(tooDeep)).toBe('arguments are nested more than 32 levels deep (arrays and objects); no tool takes anything that deep');
  });

  it('run_sql answers what POST /v1/query answers, with the same rules and errors', async () => {
    const headers = { 'x-api-key': key };
    const sql = (query: string, format = 'json') => t.app.inject({ method: 'POST', url: '/v1/query', headers, payload: { query, format } });
    const query =
      "SELECT protocol_name, count() AS n, sum(fee) AS fees FROM transactions WHERE date >= '2024-12-30' GROUP BY protocol_name ORDER BY protocol_name";
    const ok = await call('run_sql', { query });
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(text(ok))).toEqual((await sql(query)).json());
    const csv = await call('run_sql', { query, format: 'csv' });
    expect(text(csv)).toBe((await sql(query, 'csv')).body);
    for (const bad of ['DROP TABLE transactions', 'SELECT 1; SELECT 2', 'SELECT * FROM system.tables', 'SELECT * FROM transactions LIMIT 10001', '']) {
      const expected = await sql(bad);
      expect(expected.statusCode, bad).toBe(400);
      const r = await call('run_sql', { query: bad });
      expect(r.isError, bad).toBe(true);
      expect(text(r), bad).toBe(expected.json<{ message: string }>().message);
    }
    // The arguments are /v1/query's body, checked by its declared request: the same words, the door's name for the whole.
    expect(text(await call('run_sql', { query, format: 'xml' }))).toBe('format must be "json" or "csv"');
    expect(text(await call('run_sql', { query, format: 'CSV' }))).toBe((await sql(query, 'csv')).body);
    expect(text(await call('run_sql', { query, format: null }))).toBe(text(ok));
    expect(text(await call('run_sql', { query, sql: query }))).toBe('run_sql has no field "sql"; fields: query, format');
    expect(text(await call('run_sql', { sql: query }))).toBe('the query must be a non-empty string');
    expect(text(await call('run_sql', { query: '   ' }))).toBe((await sql('   ')).json<{ message: string }>().message);
  });

  it("run_sql is priced against the plan's budget like /v1/query: a cross join too dear for the free plan is refused alike", async () => {
    const free = (await createKey(t.app, 'free', 'mcp-free')).key;
    const c = await connect({ 'x-api-key': free });
    const query = 'SELECT count() FROM transactions AS a, transactions AS b, transactions AS c';
    const expected = await t.app.inject({ method: 'POST', url: '/v1/query', headers: { 'x-api-key': free }, payload: { query } });
    expect(expected.statusCode).toBe(400);
    const r = await call('run_sql', { query }, c);
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(expected.json<{ message: string }>().message);
    await c.close();
  });

  it('list_protocols, get_usage and the resources', async () => {
    const protocols = JSON.parse(text(await call('list_protocols'))) as { protocolName: string; programId: string; newestBlockTime: string | null }[];
    expect(protocols.map((p) => p.protocolName)).toEqual(await rpc.call('getProtocols', []));
    expect(protocols.find((p) => p.protocolName === 'jupiter_v6')).toMatchObject({ programId: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4' });
    expect(protocols.every((p) => typeof p.newestBlockTime === 'string')).toBe(true);
    expect(text(await call('list_protocols', { all: true }))).toBe('all is not an argument of list_protocols (it takes none)');

    const usage = JSON.parse(text(await call('get_usage'))) as { plan: string; rateLimit: { requestsPerMinute: number; remaining: number } };
    expect(usage.plan).toBe('enterprise');
    expect(usage.rateLimit.requestsPerMinute).toBe(2000);
    expect(usage.rateLimit.remaining).toBeLessThan(2000);

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['txa://protocols', 'txa://tables/transactions/columns']);
    const cols = await client.readResource({ uri: 'txa://tables/transactions/columns' });
    const table = JSON.parse((cols.contents[0] as { text: string }).text) as { columns: { name: string; type: string; description?: string }[] };
    const names = table.columns.map((c) => c.name);
    for (const spec of [
      'signature',
      'protocol_name',
      'program_id',
      'date',
      'hour',
      'day_of_week',
      'instruction_type',
      'fee',
      'compute_units',
      'accounts_count',
      'success',
    ]) {
      expect(names).toContain(spec);
    }
    expect(table.columns.find((c) => c.name === 'date')?.description).toContain('YYYY-MM-DD');
    const listed = await client.readResource({ uri: 'txa://protocols' });
    expect(JSON.parse((listed.contents[0] as { text: string }).text)).toEqual(protocols);
  });

  it('usage is recorded per tool (and per MCP method), errors as errors; get_usage shows it', async () => {
    const k = await createKey(t.app, 'x402', 'mcp-usage');
    const c = await connect({ 'x-api-key': k.key });
    await call('getProtocols', {}, c);
    await call('getProtocols', {}, c);
    await call('run_sql', { query: 'DROP TABLE transactions' }, c);
    await c.listTools();
    await expect(c.callTool({ name: 'invented_tool', arguments: {} })).rejects.toThrow();
    // Params the SDK refuses before any tool is looked up still count, as invalid calls.
    const raw = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': k.key },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5, arguments: {} } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getProtocols', arguments: [] } },
      ]),
    });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { error: { code: number } }[]).map((a) => a.error.code)).toEqual([-32602, -32602]);
    // Recorded once each answer is sent, written every few seconds: flush now.
    await new Promise((r) => setTimeout(r, 100));
    await t.services.access.usage.flush();
    const { usage } = JSON.parse(text(await call('get_usage', {}, c))) as {
      usage: { byMethod: { interface: string; method: string; requests: number; errors: number }[] };
    };
    const of = (method: string) => usage.byMethod.find((u) => u.interface === 'mcp' && u.method === method);
    expect(of('getProtocols')).toMatchObject({ requests: 2, errors: 0 });
    expect(of('run_sql')).toMatchObject({ requests: 1, errors: 1 });
    expect(of('tools/list')).toMatchObject({ requests: 1 });
    expect(of('initialize')).toMatchObject({ requests: 1 });
    expect(of('(unknown tool)')).toMatchObject({ requests: 1, errors: 1 });
    expect(of('(invalid tool call)')).toMatchObject({ requests: 2, errors: 2 });
    expect(usage.byMethod.some((u) => u.method.includes('invented'))).toBe(false);
    await c.close();
  });

  it("without a key: 401 with SPEC's body; an unknown key: 403; the bearer form works", async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const post = (headers: Record<string, string>, url = `${base}/mcp`) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'Unauthorized', message: MISSING_KEY_MESSAGE_BEARER });
    await expect(connect({})).rejects.toMatchObject({ code: 401, message: expect.stringContaining('API key required') });
    const wrong = await post({ 'x-api-key': 'txa_not_a_key' });
    expect(wrong.status).toBe(403);
    expect((await wrong.json()) as unknown).toMatchObject({ error: 'Forbidden' });
    expect((await post({ authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await post({}, `${base}/mcp?api-key=${encodeURIComponent(key)}`)).status).toBe(200);
    const bearer = await connect({ authorization: `Bearer ${key}` });
    expect(JSON.parse(text(await call('getProtocols', {}, bearer)))).toEqual(await rpc.call('getProtocols', []));
    await bearer.close();
  });

  it('the client configuration of docs/mcp.md works as written (its URL and key pointed at this server)', async () => {
    const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'mcp.md'), 'utf8');
    const block = /```json\n([\s\S]*?)```/.exec(doc)![1]!;
    const server = (JSON.parse(block) as { mcpServers: Record<string, { url: string; headers: Record<string, string> }> }).mcpServers.txa!;
    const headers = Object.fromEntries(Object.entries(server.headers).map(([k, v]) => [k, v.replace('YOUR_API_KEY', key)]));
    const c = await connect(headers, server.url.replace('http://localhost:8080', base));
    expect(JSON.parse(text(await call('getProtocols', {}, c)))).toEqual(await rpc.call('getProtocols', []));
    await c.close();
  });

  it('answers only POST (405 with Allow otherwise); a body that is not JSON is a JSON-RPC parse error', async () => {
    const get = await fetch(`${base}/mcp`, { headers: { 'x-api-key': key, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toContain('POST');
    const bad = await fetch(`${base}/mcp`, {
      method: 'POST',
      body: '{"jsonrpc":',
      headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('/llms.txt describes the doors for agents without a key, listing every MCP tool', async () => {
    const res = await fetch(`${base}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const body = await res.text();
    expect(body).toMatch(/^# /);
    for (const door of ['POST /mcp', 'POST /v1/rpc', 'POST /v1/query', 'POST /graphql', 'GET /v1/metrics', 'x-api-key']) expect(body).toContain(door);
    const { tools } = await client.listTools();
    for (const tool of tools) expect(body).toContain(`- ${tool.name}: `);
  });

  it('a revoked key is cut off at its next call', async () => {
    const k = await createKey(t.app, 'x402', 'mcp-revoked');
    const c = await connect({ 'x-api-key': k.key });
    expect((await call('getProtocols', {}, c)).isError).toBeFalsy();
    const revoked = await t.app.inject({ method: 'POST', url: `/admin/keys/${k.id}/revoke`, headers: adminHeaders() });
    expect(revoked.statusCode).toBe(200);
    await expect(c.callTool({ name: 'getProtocols', arguments: {} })).rejects.toMatchObject({
      code: 403,
      message: expect.stringContaining('API key has been revoked'),
    });
    await c.close();
  });

  it("each tool call counts against the plan's rate limit, the calls of a batch each", async () => {
    const k = (await createKey(t.app, 'free', 'mcp-rate')).key;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': k, 'mcp-protocol-version': '2025-06-18' };
    const callOf = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getProtocols', arguments: {} } });
    const one = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(callOf(1)) });
    expect(one.status).toBe(200);
    const before = Number(one.headers.get('x-ratelimit-remaining'));
    // Like every analytics answer, it says how fresh the data is (docs/access.md, "Freshness").
    expect(one.headers.get('x-data-newest-block-time')).toMatch(/^\d{4}-\d\d-\d\dT/);
    const batch = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify([callOf(2), callOf(3), callOf(4)]) });
    expect(batch.status).toBe(200);
    expect(Number(batch.headers.get('x-ratelimit-remaining'))).toBe(before - 3);
    const answers = (await batch.json()) as { id: number; result: ToolResult }[];
    expect(answers.map((a) => a.id).sort()).toEqual([2, 3, 4]);
    expect(answers.every((a) => !a.result.isError)).toBe(true);
  });

  it('a tool argument JSON.parse would round is refused, that call only, as JSON-RPC refuses it (the batch path too)', async () => {
    const k = (await createKey(t.app, 'free', 'mcp-inexact')).key;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': k, 'mcp-protocol-version': '2025-06-18' };
    // The text as sent: 1.0000000000000001 is read as 1 by JSON.parse, a page size in range.
    const call = (id: number, limit: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"getTransactions","arguments":{"options":{"limit":${limit}}}}}`;
    const batch = await fetch(`${base}/mcp`, { method: 'POST', headers, body: `[${call(1, '1.0000000000000001')},${call(2, '1.0')}]` });
    const answers = (await batch.json()) as { id: number; result: ToolResult }[];
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(1)!.isError).toBe(true);
    const words = 'the number 1.0000000000000001 cannot be represented exactly (JSON numbers are doubles) and would be read as 1';
    expect(byId.get(1)!.content[0]!.text).toContain(`arguments: ${words}`);
    expect(byId.get(2)!.isError).toBeFalsy();
    const rpcAnswer = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'content-type': 'application/json', 'x-api-key': k },
      payload: '{"jsonrpc":"2.0","id":1,"method":"getTransactions","params":[{"limit":1.0000000000000001}]}',
    });
    expect(JSON.stringify(rpcAnswer.json())).toContain(words);
  });

  it('many calls at once, every one with the same JSON-RPC id, each get the answer to their own arguments', async () => {
    // Each POST has its own transport and server (stateless): nothing of one request may reach
    // another's answer, however the SDK keys its requests (by id) and whatever runs side by side.
    const keys = await Promise.all([1, 2, 3, 4].map(async (i) => (await createKey(t.app, 'enterprise', `mcp-concurrent-${i}`)).key));
    const names = ((await rpc.call('getProtocols', [])) as string[]).slice(0, 8);
    expect(names.length).toBeGreaterThan(2);
    const calls: { method: string; params: unknown[] }[] = [
      ...signatures.map((s) => ({ method: 'getTransaction', params: [s] })),
      ...names.map((p) => ({ method: 'getProtocolStats', params: [{ protocolName: p, blockTime: partial }] })),
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((limit) => ({ method: 'getTransactionsForAddress', params: [HOT, { limit, sortOrder: 'desc' }] })),
      ...names.map((p) => ({ method: 'getProtocolActivity', params: [{ protocolName: p, blockTime: range, interval: 'day' }] })),
    ];
    const expected: unknown[] = [];
    for (const c of calls) expected.push(await rpc.call(c.method, c.params));
    const answers = await Promise.all(
      calls.map(async (c, i) => {
        const headers = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': keys[i % keys.length]!,
          'mcp-protocol-version': '2025-06-18',
        };
        const res = await fetch(`${base}/mcp`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: c.method, arguments: argsOf(c.method, c.params) } }),
        });
        return { status: res.status, body: (await res.json()) as { id: unknown; result: ToolResult } };
      }),
    );
    expect(answers.length).toBeGreaterThanOrEqual(30);
    answers.forEach((a, i) => {
      const what = `${calls[i]!.method} ${JSON.stringify(calls[i]!.params)}`;
      expect(a.status, what).toBe(200);
      expect(a.body.id, what).toBe(1);
      expect(a.body.result.isError, what).toBeFalsy();
      expect(JSON.parse(text(a.body.result)), what).toEqual(expected[i]);
    });
  });

  it("the common tool call, answered past the SDK's protocol, reads to the byte what the SDK's Server answers", async () => {
    // The door answers a single plain tools/call itself for speed (McpDoor.direct); a door
    // without that shortcut is the reference: every answer and every usage label must agree.
    const deps = {
      analytics: t.services.analytics,
      sandbox: t.services.sqlSandbox,
      registry: t.services.registry,
      freshness: t.services.freshness,
      usage: t.services.access.usageStore,
    };
    const doors = { direct: new McpDoor(deps, '1.0.0'), server: new McpDoor(deps, '1.0.0', false) };
    const toolCall = (name: string, args: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const bodies: unknown[] = [
      ...validCalls().map((c, i) => toolCall(c.method, argsOf(c.method, c.params), i)),
      ...invalidCalls().map((c) => toolCall(c.method, argsOf(c.method, c.params), 'x')),
      toolCall('run_sql', { query: 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name' }),
      toolCall('run_sql', { query: 'SELECT 1; DROP TABLE transactions' }),
      toolCall('run_sql', { query: 'SELECT signature FROM transactions ORDER BY signature LIMIT 3', format: 'csv' }),
      toolCall('list_protocols', {}),
      toolCall('list_protocols', { extra: 1 }),
      toolCall('getTransaction', { signature, extra: true }),
      toolCall('no_such_tool', {}),
      toolCall('getProtocols', [1]),
      { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'getProtocols' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getProtocols', arguments: {}, _meta: { progressToken: 'p' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ];
    const caller = (budget: Budget | null): ToolCaller => ({ keyId: 'direct-test', plan: 'enterprise', budget, rateLimit: null });
    const answer = async (door: McpDoor, body: unknown, budget: Budget | null) => {
      const calls: { label: string; error: boolean }[] = [];
      const hooks: CallHooks = { reference: 'req-1', onInternalError: () => {}, onToolCall: (label, error) => calls.push({ label, error }) };
      const post = {
        accept: 'application/json, text/event-stream',
        contentType: 'application/json',
        protocolVersion: '2025-06-18',
        body: structuredClone(body),
      };
      return { answer: await door.answer(post, caller(budget), hooks, 1), calls };
    };
    for (const body of bodies) {
      const want = await answer(doors.server, body, null);
      expect(await answer(doors.direct, body, null), JSON.stringify(body)).toEqual(want);
    }
    // An answer past the request's answer budget is the same tool error on both.
    const big = toolCall('getTransactions', { options: { limit: 1000 } });
    const tight = () => Object.assign(new Budget('free', 'rpc'), { answerBytes: 200 });
    const refused = await answer(doors.server, big, tight());
    expect(JSON.parse(refused.answer.body!).result.isError).toBe(true);
    expect(await answer(doors.direct, big, tight())).toEqual(refused);
  });

  it('a task-augmented call is processed normally, its task ignored, as MCP asks of a server that declares no tasks', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
      'mcp-protocol-version': '2025-11-25',
    };
    const want = await rpc.call('getProtocols', []);
    const withTask = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getProtocols', arguments: {}, task: { ttl: 60_000 } } });
    const one = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(withTask(1)) });
    expect(one.status).toBe(200);
    const body = (await one.json()) as { result: ToolResult };
    expect(body.result.isError).toBeFalsy();
    expect(JSON.parse(text(body.result))).toEqual(want);
    const batch = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify([withTask(2), withTask(3)]) });
    const answers = (await batch.json()) as { id: number; result: ToolResult }[];
    expect(answers.map((a) => JSON.parse(text(a.result)))).toEqual([want, want]);
  });

  it('a call whose client leaves before the answer ran and counted, so it is recorded in usage (MCP and SQL alike)', async () => {
    // Fastify runs onResponse only for a response that finished; a dropped socket never does.
    const k = await createKey(t.app, 'enterprise', 'mcp-gone');
    const keyId = k.id;
    // A query that runs well past the moment its client goes (a cross join of the fixture).
    const slow = 'SELECT a.signature, count() AS n FROM transactions a CROSS JOIN transactions b GROUP BY a.signature ORDER BY n DESC, a.signature LIMIT 500';
    let remainingBefore = (await t.services.access.limiter.peek(`key:${keyId}`, PLAN_LIMITS.enterprise)).remaining;
    const dropped = (path: string, body: unknown, headers: Record<string, string>) =>
      new Promise<void>((resolve) => {
        const req = httpRequest(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': k.key, ...headers } });
        req.on('error', () => resolve());
        req.on('close', () => resolve());
        req.end(JSON.stringify(body));
        // Gone once the server has authenticated and charged the request (the key's window
        // counts one more: SQL takes no in-flight slot to wait for) and its query has had a
        // moment to start.
        void (async () => {
          const charged = async () => (await t.services.access.limiter.peek(`key:${keyId}`, PLAN_LIMITS.enterprise)).remaining;
          const before = remainingBefore;
          while ((await charged()) >= before) await new Promise((r) => setTimeout(r, 5));
          remainingBefore = await charged();
          await new Promise((r) => setTimeout(r, 20));
          req.destroy();
        })();
      });
    await dropped(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_sql', arguments: { query: slow } } },
      { accept: 'application/json, text/event-stream' },
    );
    await dropped('/v1/query', { query: slow }, {});
    // The queries end on their own after their clients left: wait for both to be recorded.
    expect(await usageOnceRecorded(keyId, 2)).toEqual(['mcp run_sql 1', 'sql POST /v1/query 1']);
  });

  it('a live stream whose client hangs up is recorded in usage once (the hijacked stream never finishes)', async () => {
    // Found by the hostile review of the usage of requests whose client left: only admitted
    // routes listened for the close, and a hijacked stream never reaches the answer edge.
    const k = await createKey(t.app, 'enterprise', 'stream-gone');
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${base}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': k.key },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      // Open (its headers arrived): the client hangs up, as every client of a live stream does.
      req.on('response', (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => undefined);
        setTimeout(() => req.destroy(), 50);
      });
      req.end(JSON.stringify({ query: 'subscription { protocolActivity { count } }' }));
    });
    await usageOnceRecorded(k.id, 1);
    // Once, not again a moment later (the close and any later hook record one request).
    await new Promise((r) => setTimeout(r, 200));
    expect(await recordedUsage(k.id)).toEqual(['graphql POST /graphql/stream 1']);
  });
});
