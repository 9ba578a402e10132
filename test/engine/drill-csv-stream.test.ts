// Fault drill: the engine fails in the middle of a CSV answer, after the first rows were
// sent. Promise: the client sees a broken response (the chunked stream ends without its
// terminating chunk, so every HTTP client reports an error), never a short file that looks
// complete; the sandbox session is given back. The fault is injected into the real engine's
// stream: the first half of its first chunk is passed on, then the stream throws.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/server/app.ts';
import { SqlSandbox } from '../../api/services/sql/sql-sandbox.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let services: Awaited<ReturnType<typeof startServices>>;
let app: FastifyInstance;
let url: string;
let headers: Record<string, string>;
let sandbox: SqlSandbox;
let failAfterFirstChunk = false;
/** Resolved by the client when the first bytes of a body reach it: the answer is under way. */
let clientGotBytes: () => void = () => {};
let bytesArrived: Promise<void> = Promise.resolve();

/** The real engine, whose CSV stream breaks after its first bytes while the flag is set. */
function breakingStreams(wh: Warehouse): Warehouse {
  return new Proxy(wh, {
    get(target, prop, receiver) {
      if (prop !== 'stream') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: Parameters<Warehouse['stream']>) => {
        const inner = target.stream(...args);
        return (async function* () {
          for await (const chunk of inner) {
            if (!failAfterFirstChunk) {
              yield chunk;
              continue;
            }
            yield chunk.subarray(0, chunk.byteLength >> 1);
            // Only once the client holds the first bytes: the route has answered 200 and is
            // streaming, however slowly the machine runs (no sleep that load could outlast).
            await bytesArrived;
            throw new Error('injected: the engine failed mid-stream');
          }
        })();
      };
    },
  });
}

beforeAll(async () => {
  services = await startServices();
  await ingestDemo(services, 4000);
  sandbox = new SqlSandbox([breakingStreams(services.wh)], { ...services.config.sql, queuePerKey: 0 }, () => services.analytics.protocols());
  app = await buildApp({ ...services, sqlSandbox: sandbox });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  headers = { ...(await apiKeyHeaders(app)), 'content-type': 'application/json' };
}, 120_000);
afterAll(async () => {
  await app?.close();
  await services?.cleanup();
});

async function readCsv(query: string): Promise<{ status: number; bytes: number; error?: string }> {
  const res = await fetch(`${url}/v1/query`, { method: 'POST', headers, body: JSON.stringify({ query, format: 'csv' }) });
  let bytes = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      clientGotBytes();
    }
    return { status: res.status, bytes };
  } catch (err) {
    return { status: res.status, bytes, error: String((err as Error).cause ?? err) };
  }
}

const QUERY = 'SELECT signature, slot, fee FROM transactions ORDER BY signature LIMIT 4000';

it('a stream that breaks after its first rows reaches the client as an error, not as a short file', async () => {
  failAfterFirstChunk = false;
  const whole = await readCsv(QUERY);
  expect(whole.error).toBeUndefined();
  failAfterFirstChunk = true;
  bytesArrived = new Promise((r) => (clientGotBytes = r));
  const broken = await readCsv(QUERY);
  // Headers and the first rows were already sent with 200; what follows must be an error.
  expect(broken.status).toBe(200);
  expect(broken.error, `read ${broken.bytes} of ${whole.bytes} bytes without an error`).toBeDefined();
  expect(broken.bytes).toBeLessThan(whole.bytes);
});

it('gives the session back: the next query on the only session is answered', async () => {
  failAfterFirstChunk = false;
  const next = await readCsv('SELECT count() FROM transactions');
  expect(next.status).toBe(200);
  expect(next.error).toBeUndefined();
  expect(sandbox.stats()).toEqual({ running: 0, waiting: 0 });
});
