// Requests in flight per key on JSON-RPC and REST (PLAN_CONCURRENCY): one key cannot queue
// unbounded work ahead of everyone else's. Past its cap a key gets 429 with Retry-After
// while other keys are served; a slot is given back when the answer is sent, and for a
// client that went away, once its request's work is done, never earlier and never lost.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyed } from '../../api/services/access/route-policy.ts';
import { PLAN_CONCURRENCY } from '../../core/plans.ts';
import { createKey } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let port: number;

function newGate(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Requests to /api/v1/__hold wait until the test opens the gate. */
let gate = newGate();
let entered = 0;

beforeAll(async () => {
  ctx = await startApp();
  // REST routes, as the REST door declares its own (keyed, an in-flight slot).
  ctx.app.get('/api/v1/__hold', { config: keyed('rest', 'rest') }, async () => {
    entered++;
    await gate.promise;
    return { ok: true };
  });
  ctx.app.get('/api/v1/__quick', { config: keyed('rest', 'rest') }, async () => ({ ok: true }));
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  gate.resolve();
  await ctx?.cleanup();
});

const FREE_CAP = PLAN_CONCURRENCY.free;
const inFlight = (keyId: string): number => ctx.services.access.inFlight.inFlight(keyId);
const get = (key: string, url: string) => ctx.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
const rpc = (key: string, method = 'getProtocols') =>
  ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key }, payload: { jsonrpc: '2.0', id: 1, method, params: [] } });

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Hold `n` requests of `key` in their handlers; resolves once all are inside. */
async function hold(key: string, n: number): Promise<Promise<{ statusCode: number }>[]> {
  const before = entered;
  const pending = Array.from({ length: n }, () => get(key, '/api/v1/__hold'));
  await until(() => entered === before + n, `${n} held requests`);
  return pending;
}

function openGate(): void {
  gate.resolve();
  gate = newGate();
}

describe('per-key cap on requests in flight', () => {
  it('is defined per plan, growing with the plan', () => {
    expect(PLAN_CONCURRENCY.free).toBeLessThan(PLAN_CONCURRENCY.x402);
    expect(PLAN_CONCURRENCY.x402).toBeLessThan(PLAN_CONCURRENCY.enterprise);
  });

  it('the request past the cap is 429 with Retry-After while another key is served', async () => {
    const a = await createKey(ctx.app, 'free', 'busy');
    const b = await createKey(ctx.app, 'free', 'neighbour');
    const held = await hold(a.key, FREE_CAP);
    expect(inFlight(a.id)).toBe(FREE_CAP);

    const extra = await get(a.key, '/api/v1/__quick');
    expect(extra.statusCode).toBe(429);
    expect(extra.json()).toEqual({
      error: 'Too Many Requests',
      message: `Too many requests in flight: plan free allows ${FREE_CAP} concurrent JSON-RPC, REST and GraphQL requests per API key; retry when one of them has been answered`,
    });
    expect(extra.headers['retry-after']).toBe('1');
    expect(extra.headers['x-ratelimit-plan']).toBe('free');
    expect(extra.headers['x-ratelimit-limit']).toBe('100');
    // JSON-RPC shares the key's slots.
    expect((await rpc(a.key)).statusCode).toBe(429);

    // Other keys are served; so is the busy key's SQL (its own gate) and /health.
    expect((await get(b.key, '/api/v1/__quick')).statusCode).toBe(200);
    const other = await rpc(b.key);
    expect(other.statusCode).toBe(200);
    expect(other.json()).toMatchObject({ result: expect.any(Array) });
    const sql = await ctx.app.inject({ method: 'POST', url: '/v1/query', headers: { 'x-api-key': a.key }, payload: { query: 'SELECT 1 AS one' } });
    expect(sql.statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);

    openGate();
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(Array(FREE_CAP).fill(200));
    expect(inFlight(a.id)).toBe(0);
    expect(inFlight(b.id)).toBe(0);
    // The slots are back: the key again runs its full cap at once.
    const again = await hold(a.key, FREE_CAP);
    openGate();
    expect((await Promise.all(again)).map((r) => r.statusCode)).toEqual(Array(FREE_CAP).fill(200));
    expect(inFlight(a.id)).toBe(0);
  });

  it('a spelling of the route that is not its path is capped too', async () => {
    const a = await createKey(ctx.app, 'free', 'spelling');
    const held = await hold(a.key, FREE_CAP);
    const spelled = await ctx.app.inject({
      method: 'POST',
      url: '/v1/%72pc',
      headers: { 'x-api-key': a.key },
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols' },
    });
    expect(spelled.statusCode).toBe(429);
    openGate();
    await Promise.all(held);
  });

  it('refused requests (429, 4xx) and failed ones give their slot back', async () => {
    const a = await createKey(ctx.app, 'free', 'refused');
    await rpc(a.key, 'nope');
    await get(a.key, '/api/v1/transactions?limit=0');
    await get(a.key, '/api/v1/transactions/x');
    await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': a.key, 'content-type': 'application/json' }, payload: '{' });
    expect(inFlight(a.id)).toBe(0);
    expect(ctx.services.access.inFlight.total()).toBe(0);
  });
});

describe('clients that go away', () => {
  /** Send `text` on a fresh connection and return the socket. */
  const send = (text: string): Promise<net.Socket> =>
    new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.write(text);
        resolve(s);
      });
      s.on('error', () => {});
    });

  it('an aborted request keeps its slot while its work runs, and gives it back when the work ends', async () => {
    const a = await createKey(ctx.app, 'free', 'aborting');
    const before = entered;
    const sockets = await Promise.all(Array.from({ length: FREE_CAP }, () => send(`GET /api/v1/__hold HTTP/1.1\r\nHost: x\r\nx-api-key: ${a.key}\r\n\r\n`)));
    await until(() => entered === before + FREE_CAP, 'held socket requests');
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    // Their handlers still run: the client's leaving frees nothing yet, so dropping and
    // re-sending cannot pile up work beyond the cap.
    expect(inFlight(a.id)).toBe(FREE_CAP);
    expect((await get(a.key, '/api/v1/__quick')).statusCode).toBe(429);
    openGate();
    await until(() => inFlight(a.id) === 0, 'slots of aborted requests back');
    expect((await get(a.key, '/api/v1/__quick')).statusCode).toBe(200);
  });

  it('a request abandoned while its body is read, or right after its headers, gives its slot back', async () => {
    const a = await createKey(ctx.app, 'free', 'half-sent');
    const partial = await Promise.all(
      Array.from({ length: FREE_CAP }, () =>
        send(`POST /v1/rpc HTTP/1.1\r\nHost: x\r\nx-api-key: ${a.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`),
      ),
    );
    await until(() => inFlight(a.id) === FREE_CAP, 'slots of half-sent requests');
    for (const s of partial) s.destroy();
    await until(() => inFlight(a.id) === 0, 'slots of half-sent requests back');
    // Sent and dropped at once: whether the service sees the drop before or after
    // admitting the request, nothing stays held.
    for (let i = 0; i < 20; i++) (await send(`GET /api/v1/__quick HTTP/1.1\r\nHost: x\r\nx-api-key: ${a.key}\r\n\r\n`)).destroy();
    await until(() => inFlight(a.id) === 0, 'slots of dropped requests back');
    const all = await Promise.all(Array.from({ length: FREE_CAP }, () => get(a.key, '/api/v1/__quick')));
    expect(all.map((r) => r.statusCode)).toEqual(Array(FREE_CAP).fill(200));
  });
});
