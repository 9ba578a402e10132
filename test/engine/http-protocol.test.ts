// The HTTP layer under Fastify, over real sockets (app.inject() bypasses Node's HTTP
// parser): requests the parser refuses are answered {error, message} with the title of
// their status, connection: close and X-RateLimit-* (the corpus in
// test/fixtures/hostile-http.json); a request not received in full within
// REQUEST_TIMEOUT_MS is answered 408 and closed, while a slow answer is never cut.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyed } from '../../api/services/access/route-policy.ts';
import { HTTP_TITLES } from '../../core/errors.ts';
import { createKey } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

interface HttpCase {
  name: string;
  rawRequest: string;
  expect: { status: number; message: string };
}

const CASES = (JSON.parse(readFileSync(new URL('../fixtures/hostile-http.json', import.meta.url), 'utf8')) as { cases: HttpCase[] }).cases;

const REQUEST_TIMEOUT_MS = 1000;
const ANONYMOUS_RATE_LIMIT = 1000;

let ctx: Awaited<ReturnType<typeof startApp>>;
let port: number;
let key: string;
let keyId: string;

beforeAll(async () => {
  ctx = await startApp({ REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), ANONYMOUS_RATE_LIMIT: String(ANONYMOUS_RATE_LIMIT) });
  // Answers later than the request time-out: the time-out must not cut them.
  ctx.app.get('/api/v1/__slow', { config: keyed('rest', 'rest') }, async () => {
    await new Promise((r) => setTimeout(r, 2.5 * REQUEST_TIMEOUT_MS));
    return { ok: true };
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as net.AddressInfo).port;
  ({ key, id: keyId } = await createKey(ctx.app, 'free', 'http-protocol'));
});
afterAll(async () => ctx?.cleanup());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the end of the answer (the server closing, or the first complete answer). */
  ms: number;
}

/**
 * Send `data` on a fresh connection (then `trickle`, one byte every `everyMs`, until the
 * server answers) and read the first answer. Rejects when nothing is answered within
 * `waitMs`.
 */
function rawRequest(data: string | Buffer, opts: { waitMs?: number; trickle?: { everyMs: number } } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: Error): void => {
      clearInterval(timer);
      clearTimeout(deadline);
      socket.destroy();
      if (err) {
        reject(err);
        return;
      }
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        reject(new Error(`no answer: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      const body = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: (Number.isNaN(length) ? body : body.subarray(0, length)).toString('utf8'),
        ms: Date.now() - t0,
      });
    };
    const complete = (): boolean => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
      return end !== -1 && m !== null && received.length >= Buffer.byteLength(text.slice(0, end + 4), 'latin1') + Number(m[1]);
    };
    const deadline = setTimeout(() => finish(new Error(`no answer within ${opts.waitMs ?? 5000} ms`)), opts.waitMs ?? 5000);
    socket.on('connect', () => {
      socket.write(data);
      if (opts.trickle) timer = setInterval(() => socket.writable && socket.write(' '), opts.trickle.everyMs);
    });
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      if (complete()) finish();
    });
    socket.on('error', () => {});
    socket.on('close', () => finish());
  });
}

const expand = (raw: string): string =>
  raw.replace(/\{\{repeat:(.*?):(\d+)\}\}/g, (_m, text: string, n: string) => text.repeat(Number(n))).replaceAll('<valid key>', key);

/** What every answer of this layer carries, whatever its status. */
function expectOurShape(res: RawAnswer, status: number): void {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(HTTP_TITLES[status]);
  expect(res.headers.connection).toBe('close');
  expect(res.headers['x-ratelimit-limit']).toBe(String(ANONYMOUS_RATE_LIMIT));
  expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
  expect(Date.parse(res.headers['x-ratelimit-reset']!)).toBeGreaterThan(Date.now() - 1000);
  expect(res.headers['x-ratelimit-plan']).toBe('free');
}

describe('requests refused by the HTTP parser (test/fixtures/hostile-http.json)', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const res = await rawRequest(expand(c.rawRequest));
    expectOurShape(res, c.expect.status);
    expect((JSON.parse(res.body) as { message: string }).message).toMatch(new RegExp(c.expect.message));
  });

  it("the service keeps answering after them, and the figures are the address's, unspent", async () => {
    const before = await rawRequest('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(before.status).toBe(200);
    await rawRequest('GARBAGE\r\n\r\n');
    const after = await rawRequest('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe(before.headers['x-ratelimit-remaining']);
  });
});

describe('request time-out (REQUEST_TIMEOUT_MS)', () => {
  it('a body trickled one byte at a time is answered 408 and the connection closed', async () => {
    const res = await rawRequest(
      `POST /v1/rpc HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      // The 1000-byte body would take 200 s to arrive: an answer before that is the time-out's.
      // Waited for generously, so a busy machine cannot turn a late answer into a failure.
      { trickle: { everyMs: 200 }, waitMs: 45_000 },
    );
    expectOurShape(res, 408);
    expect(JSON.parse(res.body)).toMatchObject({ message: `the request was not received in full within ${REQUEST_TIMEOUT_MS} ms` });
  });

  it('headers that never end are answered 408 too', async () => {
    const res = await rawRequest('GET /api/v1/stats HTTP/1.1\r\nHost: x\r\n', { waitMs: 45_000 });
    expectOurShape(res, 408);
  });

  it('the in-flight slot of a timed-out request is given back', async () => {
    await rawRequest(`POST /v1/rpc HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Length: 10\r\n\r\n{`, { waitMs: 4 * REQUEST_TIMEOUT_MS });
    const t0 = Date.now();
    while (ctx.services.access.inFlight.inFlight(keyId) > 0 && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 20));
    expect(ctx.services.access.inFlight.inFlight(keyId)).toBe(0);
  });

  it('does not cut an answer that takes longer than the time-out', async () => {
    const res = await rawRequest(`GET /api/v1/__slow HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n\r\n`, { waitMs: 5 * REQUEST_TIMEOUT_MS });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
    expect(res.ms).toBeGreaterThanOrEqual(2.5 * REQUEST_TIMEOUT_MS - 50);
  });

  it('an idle keep-alive connection is not cut by it: a request after a pause longer than the time-out is answered', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
      });
    expect(await get()).toEqual({ status: 200, reused: false });
    await new Promise((r) => setTimeout(r, 1.5 * REQUEST_TIMEOUT_MS));
    expect(await get()).toEqual({ status: 200, reused: true });
    agent.destroy();
  });
});

describe('after all of the above', () => {
  it('no in-flight slot is left held', async () => {
    const t0 = Date.now();
    while (ctx.services.access.inFlight.total() > 0 && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 20));
    expect(ctx.services.access.inFlight.total()).toBe(0);
  });
});
