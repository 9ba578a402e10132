// The door's own stateless transport (api/doors/mcp/mcp-transport.ts) against the SDK's
// WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }), stateless, as the door
// used it before: the same Server handlers behind each, the same POSTs, and the answers must be
// the same, status, headers and body text. The SDK's transport is the reference, so an SDK
// upgrade that changes its answers fails here, naming the case.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StatelessJsonTransport, type DirectAnswer, type McpAnswer } from '../../api/doors/mcp/mcp-transport.ts';

/** A Server with a tool that echoes its arguments, one that fails, and tools/list. */
function server(): Server {
  const s = new Server({ name: 'transport-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  s.setRequestHandler(CallToolRequestSchema, (request) => {
    if (request.params.name === 'fail') throw new McpError(ErrorCode.InvalidParams, 'no such tool');
    return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
  });
  return s;
}

interface Post {
  accept?: string;
  contentType?: string;
  protocolVersion?: string;
  body: unknown;
}

const ACCEPT = 'application/json, text/event-stream';
const post = (body: unknown, headers: Omit<Post, 'body'> = {}): Post => ({
  accept: ACCEPT,
  contentType: 'application/json',
  protocolVersion: '2025-06-18',
  ...headers,
  body,
});

/** The SDK's answer: a new Server and transport per POST, as a stateless SDK server does. */
async function sdkAnswer(p: Post): Promise<McpAnswer> {
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await server().connect(transport);
  const headers = new Headers();
  if (p.accept !== undefined) headers.set('accept', p.accept);
  if (p.contentType !== undefined) headers.set('content-type', p.contentType);
  if (p.protocolVersion !== undefined) headers.set('mcp-protocol-version', p.protocolVersion);
  const res = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(p.body) }), {
    parsedBody: p.body,
  });
  const text = await res.text();
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: text === '' ? undefined : text };
}

/**
 * The door's own answer to the plain tool calls the echo server's handler takes
 * (answerDirectly): params exactly a string name and an object of arguments, if any.
 */
let answeredHereCount = 0;
const answeredHere: DirectAnswer<null> = (request) => {
  const params = request.params;
  if (request.method !== 'tools/call' || params === undefined || Object.keys(params).some((k) => k !== 'name' && k !== 'arguments')) return undefined;
  const args = params.arguments;
  if (typeof params.name !== 'string' || (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))) return undefined;
  answeredHereCount += 1;
  return (async () => {
    if (params.name === 'fail') throw new McpError(ErrorCode.InvalidParams, 'no such tool');
    return { content: [{ type: 'text', text: JSON.stringify(args ?? {}) }] };
  })();
};

/**
 * Ours: one Server and transport for every POST, requests handed to the protocol as the door
 * does ('straight'), or through its onmessage, or the plain tool calls answered past it ('answered').
 */
async function ours(route: 'straight' | 'onmessage' | 'answered' = 'straight'): Promise<(p: Post) => Promise<McpAnswer>> {
  const transport = new StatelessJsonTransport<null>();
  const s = server();
  await s.connect(transport);
  if (route !== 'onmessage' && !transport.handRequestsTo(s)) throw new Error("this SDK's protocol has no _onrequest: see handRequestsTo");
  if (route === 'answered') transport.answerDirectly(answeredHere);
  return (p) => transport.handle({ accept: p.accept, contentType: p.contentType, protocolVersion: p.protocolVersion, body: p.body }, null);
}

const call = (id: unknown, args: unknown = { n: id }, name = 'echo'): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };

const CASES: [string, Post][] = [
  ['a tool call', post(call(1))],
  ['a tool call with a string id', post(call('a-b'))],
  ['a tool call with id 0', post(call(0))],
  ['a tool call the handler refuses', post(call(7, {}, 'fail'))],
  ['a tool call without arguments', post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo' } })],
  ['a tool call with a non-string name', post(call(1, {}, 5 as unknown as string))],
  ['a tool call with arguments that are not an object', post(call(1, [1, 2]))],
  [
    'a tool call with _meta in params',
    post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: { progressToken: 1 } } }),
  ],
  ['a tool call without params', post({ jsonrpc: '2.0', id: 1, method: 'tools/call' })],
  ['a tool call with a negative id', post(call(-3))],
  ['a tool call with an id past the safe integers', post(call(2 ** 60))],
  ['a tool call with an empty string id', post(call(''))],
  ['tools/list', post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })],
  ['ping', post({ jsonrpc: '2.0', id: 3, method: 'ping' })],
  ['an unknown method', post({ jsonrpc: '2.0', id: 4, method: 'nope/nothing' })],
  ['initialize', post(initialize, { protocolVersion: undefined })],
  ['initialize with an unsupported protocol version header (not checked on initialize)', post(initialize, { protocolVersion: '1999-01-01' })],
  ['initialize with an unknown version in params', post({ ...initialize, params: { ...initialize.params, protocolVersion: '1999-01-01' } })],
  ['initialize in a batch', post([initialize, call(2)])],
  ['no Accept', post(call(1), { accept: undefined })],
  ['Accept: application/json only', post(call(1), { accept: 'application/json' })],
  ['Accept: text/event-stream only', post(call(1), { accept: 'text/event-stream' })],
  ['Accept: */*', post(call(1), { accept: '*/*' })],
  ['Accept with both, in another order and with q values', post(call(1), { accept: 'text/event-stream;q=0.9, application/json' })],
  ['no Content-Type', post(call(1), { contentType: undefined })],
  ['Content-Type: text/plain', post(call(1), { contentType: 'text/plain' })],
  ['Content-Type: application/json; charset=utf-8', post(call(1), { contentType: 'application/json; charset=utf-8' })],
  ['Content-Type: APPLICATION/JSON', post(call(1), { contentType: 'APPLICATION/JSON' })],
  ['Content-Type: text/plain; a=application/json', post(call(1), { contentType: 'text/plain; a=application/json' })],
  ['Content-Type: application/json; (a sloppy parameter section)', post(call(1), { contentType: 'application/json;' })],
  ['Content-Type: application/jsonx', post(call(1), { contentType: 'application/jsonx' })],
  ['an unsupported MCP-Protocol-Version', post(call(1), { protocolVersion: '2099-01-01' })],
  ['no MCP-Protocol-Version', post(call(1), { protocolVersion: undefined })],
  ['the oldest supported MCP-Protocol-Version', post(call(1), { protocolVersion: '2024-11-05' })],
  ['a notification alone', post(notification)],
  ['notifications only, batched', post([notification, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }])],
  ['a client response alone', post({ jsonrpc: '2.0', id: 9, result: {} })],
  ['a client error response alone', post({ jsonrpc: '2.0', id: 9, error: { code: -1, message: 'x' } })],
  ['a cancellation alone', post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })],
  ['an empty batch', post([])],
  ['a batch of two calls', post([call(1), call(2)])],
  ['a batch of one call', post([call(1)])],
  ['a batch of calls and a notification', post([call(1), notification, call('x')])],
  ['a batch with two calls under one id', post([call(5, { first: true }), call(5, { second: true })])],
  ['a batch with a call and a cancellation of another id', post([call(1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }])],
  ['a batch of 100 calls', post(Array.from({ length: 100 }, (_, i) => call(i + 1)))],
  ['a batch of 101 calls', post(Array.from({ length: 101 }, (_, i) => call(i + 1)))],
  ['a message with an unknown member', post({ ...call(1), extra: true })],
  ['a message without jsonrpc', post({ id: 1, method: 'tools/list' })],
  ['jsonrpc 1.0', post({ jsonrpc: '1.0', id: 1, method: 'tools/list' })],
  ['a fractional id', post(call(1.5))],
  ['a null id', post(call(null))],
  ['an object id', post(call({ a: 1 }))],
  ['params that are not an object', post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1] })],
  ['a number as the body', post(5)],
  ['a string as the body', post('tools/list')],
  ['null as the body', post(null)],
  ['a batch with one invalid message', post([call(1), { jsonrpc: '2.0' }])],
  ['a batch with a nested batch', post([[call(1)]])],
];

describe("the door's stateless transport answers as the SDK's transport does", () => {
  it.each(CASES)('%s', async (_name, p) => {
    const want = await sdkAnswer(p);
    expect(await (await ours())(p)).toEqual(want);
    // And with every message through the protocol's public onmessage (its type guards first).
    expect(await (await ours('onmessage'))(p)).toEqual(want);
    // And with the plain tool calls answered by the door itself, past the protocol.
    expect(await (await ours('answered'))(p)).toEqual(want);
  });

  it('one transport serves concurrent POSTs that reuse ids, each its own answers, as a transport per POST does', async () => {
    const answer = await ours();
    const posts = Array.from({ length: 30 }, (_, i) => post(i % 3 === 0 ? [call(1, { i }), call(2, { i })] : call(1, { i })));
    const got = await Promise.all(posts.map(answer));
    const want = await Promise.all(posts.map(sdkAnswer));
    expect(got).toEqual(want);
  });

  it('a cancellation never reaches a request of another sender under the same id', async () => {
    // Sent together, the cancellation is handled before the call's handler would run: were it
    // to reach the call (whose own id on a new transport is also 1), the call would never be answered.
    const transport = new StatelessJsonTransport<string>((sender) => sender);
    const s = server();
    await s.connect(transport);
    transport.handRequestsTo(s);
    const answer = (p: Post, sender: string) =>
      transport.handle({ accept: p.accept, contentType: p.contentType, protocolVersion: p.protocolVersion, body: p.body }, sender);
    const cancel = post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    const [called, cancelled] = await Promise.all([answer(post(call(1)), 'a'), answer(cancel, 'b')]);
    expect(called).toEqual(await sdkAnswer(post(call(1))));
    expect(cancelled).toEqual({ status: 202, headers: {}, body: undefined });
  });

  describe("a cancellation of its sender stops a call and ends its POST at once (the SDK's transport waits for the call forever)", () => {
    /** A transport whose tool waits until its signal aborts (or for good): what ran, and what was aborted. */
    async function slow(route: 'straight' | 'answered') {
      const started: number[] = [];
      const aborted: number[] = [];
      const run = (n: number, signal: AbortSignal) =>
        new Promise<Record<string, unknown>>((resolve) => {
          started.push(n);
          const stop = () => {
            aborted.push(n);
            resolve({ content: [{ type: 'text', text: 'stopped' }] });
          };
          if (signal.aborted) stop();
          else signal.addEventListener('abort', stop, { once: true });
          if (n === 0) resolve({ content: [{ type: 'text', text: 'quick' }] });
        });
      const s = new Server({ name: 'transport-test', version: '1.0.0' }, { capabilities: { tools: {} } });
      s.setRequestHandler(CallToolRequestSchema, (request, extra) => run(Number((request.params.arguments as { n: number }).n), extra.signal));
      const transport = new StatelessJsonTransport<string>((sender) => sender);
      await s.connect(transport);
      transport.handRequestsTo(s);
      if (route === 'answered') transport.answerDirectly((request, _sender, signal) => run(Number((request.params!.arguments as { n: number }).n), signal));
      const answer = (p: Post, sender = 'k') =>
        transport.handle({ accept: p.accept, contentType: p.contentType, protocolVersion: p.protocolVersion, body: p.body }, sender);
      return { answer, started, aborted };
    }
    const cancelOf = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });

    it("in the same POST, after its call: the POST answers 202 and the call's signal aborts", async () => {
      const t = await slow('straight');
      expect(await t.answer(post([call(1, { n: 5 }), cancelOf(1)]))).toEqual({ status: 202, headers: {}, body: undefined });
      expect(t.aborted).toEqual([5]);
    });

    it('in the same POST, before its call: the call is never handed to the Server', async () => {
      const t = await slow('straight');
      expect(await t.answer(post([cancelOf(1), call(1, { n: 5 })]))).toEqual({ status: 202, headers: {}, body: undefined });
      expect(t.started).toEqual([]);
    });

    it('in the same POST, beside another call: the POST answers the other call alone', async () => {
      const t = await slow('straight');
      const got = await t.answer(post([call(1, { n: 5 }), call(2, { n: 0 }), cancelOf(1)]));
      expect(got.status).toBe(200);
      expect(JSON.parse(got.body!)).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'quick' }] } });
    });

    for (const route of ['straight', 'answered'] as const) {
      it(`in a later POST (${route === 'straight' ? 'through the Server' : 'a call the door answers itself'}): the running call aborts and its POST answers 202`, async () => {
        const t = await slow(route);
        const pending = t.answer(post(route === 'straight' ? [call(9, { n: 9 }), call(1, { n: 0 })] : call(9, { n: 9 })));
        await new Promise((resolve) => setImmediate(resolve));
        expect(t.started).toContain(9);
        // Another sender's cancellation of the same id reaches nothing.
        expect(await t.answer(post(cancelOf(9)), 'other')).toEqual({ status: 202, headers: {}, body: undefined });
        expect(t.aborted).toEqual([]);
        expect(await t.answer(post(cancelOf(9)))).toEqual({ status: 202, headers: {}, body: undefined });
        const got = await pending;
        expect(t.aborted).toEqual([9]);
        if (route === 'answered') expect(got).toEqual({ status: 202, headers: {}, body: undefined });
        else expect(JSON.parse(got.body!)).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'quick' }] } });
      });
    }
  });

  it('a batch that reuses an id is answered as the SDK answers it, but only once every request of it has run', async () => {
    // The SDK's transport answers when each distinct id has an answer, leaving a later request
    // of a reused id running after the POST ended (and after the door freed its in-flight slot).
    const s = new Server({ name: 'transport-test', version: '1.0.0' }, { capabilities: { tools: {} } });
    const finished: number[] = [];
    s.setRequestHandler(CallToolRequestSchema, async (request) => {
      const n = Number((request.params.arguments as { n: number }).n);
      await new Promise((resolve) => setTimeout(resolve, n));
      finished.push(n);
      return { content: [{ type: 'text', text: String(n) }] };
    });
    const transport = new StatelessJsonTransport<null>();
    await s.connect(transport);
    transport.handRequestsTo(s);
    const batch = post([call(1, { n: 1 }), call(1, { n: 120 }), call(1, { n: 60 })]);
    const got = await transport.handle(
      { accept: batch.accept, contentType: batch.contentType, protocolVersion: batch.protocolVersion, body: batch.body },
      null,
    );
    expect(finished.sort((a, b) => a - b)).toEqual([1, 60, 120]);
    expect(got.status).toBe(200);
    // The one answer for id 1 is the first to come, as with the SDK's transport.
    expect(JSON.parse(got.body!)).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '1' }] } });
  });

  it("the pinned SDK's protocol takes requests straight (handRequestsTo), as the door relies on for speed", async () => {
    // If an SDK upgrade renames the protocol's request handling, the door falls back to onmessage
    // (correct, slower): this fails so that the upgrade looks at it.
    const transport = new StatelessJsonTransport<null>();
    const s = server();
    await s.connect(transport);
    expect(transport.handRequestsTo(s)).toBe(true);
  });

  it('a plain tool call is answered past the protocol when the door asks to; anything else is left to the Server', async () => {
    const answer = await ours('answered');
    const before = answeredHereCount;
    await answer(post(call(1)));
    expect(answeredHereCount).toBe(before + 1);
    // A batch, a notification and a malformed message never reach the door's own answer.
    await answer(post([call(1), call(2)]));
    await answer(post({ ...call(1), extra: true }));
    await answer(post(call(1), { protocolVersion: '2099-01-01' }));
    expect(answeredHereCount).toBe(before + 1);
  });

  it('the SDK transport sets only Content-Type on a JSON answer and nothing on a 202 (so ours copies no other header)', async () => {
    expect(Object.keys((await sdkAnswer(post(call(1)))).headers)).toEqual(['content-type']);
    expect((await sdkAnswer(post(notification))).headers).toEqual({});
  });
});
