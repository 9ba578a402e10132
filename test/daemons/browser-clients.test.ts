// Browser clients (docs/browser-clients.md): CORS on the API doors and not on the dashboard,
// compression (gzip, brotli, streamed answers stay streamed), ETag from the data version with
// If-None-Match -> 304, Cache-Control; then headless Chromium on a second origin calling
// every door: JSON-RPC, REST (header and ?api-key), SQL (JSON and CSV), GraphQL, an
// EventSource on the GraphQL stream, an export job and its file download, and the MCP door
// with the official SDK's client bundled into the page (a browser-based agent).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { Readable } from 'node:stream';
import path from 'node:path';
import { buildApp } from '../../api/server/app.ts';
import { installAnswerBudget } from '../../api/services/access/request-budget.ts';
import { installCompression } from '../../api/services/answers/compression.ts';
import { Budget } from '../../core/budget.ts';
import { ANSWER_BUDGET_BYTES } from '../../core/limits/answers.ts';
import { launchChromium } from '../support/browser.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingest, ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let key: string;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  key = headers['x-api-key']!;
  await ingestDemo(t.services, 3000);
});
afterAll(async () => t?.cleanup());

const ORIGIN = 'https://pages.example.net';
const preflight = (url: string, method: string, origin = ORIGIN) =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type' },
  });

describe('CORS', () => {
  it.each([
    ['/v1/rpc', 'POST'],
    ['/api/v1/transactions', 'GET'],
    ['/api/v1/analytics/fees', 'GET'],
    ['/v1/query', 'POST'],
    ['/api/v1/query', 'POST'],
    ['/graphql', 'POST'],
    ['/graphql/stream', 'GET'],
    ['/v1/query/exports', 'POST'],
    ['/v1/exports/some-job/files/train.csv', 'GET'],
    ['/v1/exports/links/some-job/train.csv', 'GET'],
    ['/mcp', 'POST'],
    ['/llms.txt', 'GET'],
  ])('answers the preflight of %s without a key: 204, the methods, the headers, any origin', async (url, method) => {
    const res = await preflight(url, method);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-allow-methods'])).toContain(method);
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/x-api-key/);
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/content-type/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // A preflight runs no work and is counted against no limit.
    const twice = await preflight(url, method);
    expect(twice.headers['x-ratelimit-remaining']).toBe(res.headers['x-ratelimit-remaining']);
  });

  it('keeps the dashboard, the operator API and /health same-origin: no CORS header, OPTIONS stays 405 with Allow', async () => {
    for (const url of ['/dashboard/api/signin', '/dashboard', '/admin/keys', '/health']) {
      const res = await preflight(url, 'POST');
      expect(res.statusCode, url).not.toBe(204);
      expect(res.headers['access-control-allow-origin'], url).toBeUndefined();
      expect(res.headers['access-control-allow-methods'], url).toBeUndefined();
    }
    const health = await preflight('/health', 'GET');
    expect(health.statusCode).toBe(405);
    expect(health.headers.allow).toBe('GET, HEAD');
    const page = await t.app.inject({ method: 'GET', url: '/dashboard', headers: { origin: ORIGIN } });
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets a page read the answer, the rate-limit and freshness headers, and why it was refused (401, 405)', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers: { ...headers, origin: ORIGIN } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(ok.headers['access-control-expose-headers']).split(', ');
    for (const h of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-ratelimit-plan',
      'retry-after',
      'x-data-newest-block-time',
      'x-data-ingested-at',
      'etag',
    ]) {
      expect(exposed).toContain(h);
    }
    const noKey = await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers: { origin: ORIGIN } });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.headers['access-control-allow-origin']).toBe('*');
    const put = await t.app.inject({ method: 'PUT', url: '/api/v1/stats', headers: { ...headers, origin: ORIGIN } });
    expect(put.statusCode).toBe(405);
    expect(put.headers['access-control-allow-origin']).toBe('*');
  });

  it('with CORS_ORIGINS set, allows only the listed origins (Vary: Origin), and none at all with none', async () => {
    const listed = await buildApp({ ...t.services, config: { ...t.services.config, http: { ...t.services.config.http, corsOrigins: [ORIGIN] } } });
    const closed = await buildApp({ ...t.services, config: { ...t.services.config, http: { ...t.services.config.http, corsOrigins: [] } } });
    try {
      const mine = await listed.inject({ method: 'GET', url: '/api/v1/stats', headers: { ...headers, origin: ORIGIN } });
      expect(mine.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(String(mine.headers.vary)).toMatch(/Origin/);
      const other = await listed.inject({
        method: 'OPTIONS',
        url: '/v1/rpc',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(other.statusCode).toBe(204);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const none = await closed.inject({ method: 'GET', url: '/api/v1/stats', headers: { ...headers, origin: ORIGIN } });
      expect(none.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await listed.close();
      await closed.close();
    }
  });
});

describe('compression', () => {
  const url = '/api/v1/transactions?limit=1000';

  it('sends gzip or brotli when accepted (brotli first at equal weight), the same JSON once decoded, and plain otherwise', async () => {
    // meta.stats (elapsed time, rows read) describes each request: the rest is the same answer.
    const withoutStats = (body: { meta?: Record<string, unknown> }) => ({ ...body, meta: { ...body.meta, stats: undefined } });
    const plain = await t.app.inject({ method: 'GET', url, headers });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(String(plain.headers.vary)).toMatch(/Accept-Encoding/);
    const gz = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(withoutStats(JSON.parse(gunzipSync(gz.rawPayload).toString()))).toEqual(withoutStats(plain.json()));
    expect(gz.rawPayload.byteLength).toBeLessThan(plain.rawPayload.byteLength / 2);
    const br = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(withoutStats(JSON.parse(brotliDecompressSync(br.rawPayload).toString()))).toEqual(withoutStats(plain.json()));
    const refused = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'accept-encoding': 'br;q=0, gzip;q=0' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
    // A small answer is not worth coding.
    const small = await t.app.inject({ method: 'GET', url: '/api/v1/transactions?limit=1', headers: { ...headers, 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('codes streamed answers as a stream (SQL CSV, GraphQL) and JSON-RPC answers', async () => {
    const query = 'SELECT signature, fee, instruction_type FROM transactions ORDER BY signature LIMIT 2000';
    const csvPlain = await t.app.inject({ method: 'POST', url: '/v1/query', headers, payload: { query, format: 'csv' } });
    const csv = await t.app.inject({ method: 'POST', url: '/v1/query', headers: { ...headers, 'accept-encoding': 'gzip' }, payload: { query, format: 'csv' } });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-encoding']).toBe('gzip');
    expect(csv.headers['content-length']).toBeUndefined(); // streamed: no length known in advance
    expect(gunzipSync(csv.rawPayload).toString()).toBe(csvPlain.body);
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, 'accept-encoding': 'br' },
      payload: { query: '{ transactions(pagination: {first: 500}) { edges { node { signature fee } } } }' },
    });
    expect(gql.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(gql.rawPayload).toString()).data.transactions.edges).toHaveLength(500);
    const rpc = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { ...headers, 'accept-encoding': 'gzip' },
      payload: { jsonrpc: '2.0', id: 1, method: 'getTransactions', params: [{ limit: 200 }] },
    });
    expect(rpc.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(rpc.rawPayload).toString()).result.data).toHaveLength(200);
  });
});

describe('the answer byte budget counts the answer before compression', () => {
  it('refuses a whole answer over the door budget, and cuts a stream, even when its gzip would fit many times over', async () => {
    // The edge's own hooks, in the order buildApp installs them, on a route of the REST door.
    const app = Fastify();
    app.decorateRequest('budget', null);
    app.addHook('onRequest', async (req) => {
      req.budget = new Budget('enterprise', 'rest');
    });
    installAnswerBudget(app);
    const over = ANSWER_BUDGET_BYTES.rest + 1024;
    app.get('/whole', async (_req, reply) => reply.type('application/json').send(`"${'a'.repeat(over)}"`));
    app.get('/stream', async (_req, reply) =>
      reply.type('text/csv').send(
        Readable.from(
          (function* () {
            for (let sent = 0; sent < over; sent += 65_536) yield Buffer.alloc(65_536, 0x61);
          })(),
        ),
      ),
    );
    installCompression(app);
    try {
      const whole = await app.inject({ method: 'GET', url: '/whole', headers: { 'accept-encoding': 'gzip' } });
      expect(whole.statusCode).toBe(400);
      expect(whole.json().error).toBe('Response Too Large');
      const stream = await app.inject({ method: 'GET', url: '/stream', headers: { 'accept-encoding': 'gzip' } }).catch((err: Error) => err);
      // Cut: the coded stream is aborted once the uncompressed bytes pass the budget.
      expect(stream).toBeInstanceOf(Error);
      expect((stream as Error).message).toMatch(/destroyed before completion/);
    } finally {
      await app.close();
    }
  });
});

describe('caching: ETag from the data version, If-None-Match, Cache-Control', () => {
  it('tags a GET answer, answers 304 to its tag without a body, and a new tag once new data lands', async () => {
    const url = '/api/v1/analytics/fees';
    const first = await t.app.inject({ method: 'GET', url, headers });
    const tag = String(first.headers.etag);
    expect(tag).toMatch(/^W\/".+"$/);
    expect(first.headers['cache-control']).toBe('private, max-age=2');
    const again = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': tag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(tag);
    expect(again.headers['x-ratelimit-remaining']).toBeDefined();
    // Another question has another tag; the key in the query is no part of it.
    const other = await t.app.inject({ method: 'GET', url: `${url}?protocol_name=jupiter_v6`, headers });
    expect(other.headers.etag).not.toBe(tag);
    const byQueryKey = await t.app.inject({ method: 'GET', url: `${url}?api-key=${encodeURIComponent(key)}`, headers: { 'if-none-match': tag } });
    expect(byQueryKey.statusCode).toBe(304);

    await ingest(t.services, [
      {
        signature: '5'.repeat(88),
        slot: 1,
        block_time: Math.floor(Date.now() / 1000) - 60,
        program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
        protocol_name: 'jupiter_v6',
        instruction_type: 'route',
        fee: 123_456_789,
        compute_units: 1,
        accounts_count: 0,
        success: true,
      },
    ]);
    const changed = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': tag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(changed.json()).not.toEqual(first.json());
  });

  it('tags GraphQL GET queries; POST answers and errors are not to be stored', async () => {
    const q = encodeURIComponent('{ protocolStats { protocolName totalTransactions } }');
    const gql = await t.app.inject({ method: 'GET', url: `/graphql?query=${q}`, headers: { ...headers, accept: 'application/json' } });
    expect(gql.statusCode).toBe(200);
    expect(gql.headers.etag).toMatch(/^W\//);
    const again = await t.app.inject({
      method: 'GET',
      url: `/graphql?query=${q}`,
      headers: { ...headers, accept: 'application/json', 'if-none-match': String(gql.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    // Export jobs move without the data version: never tagged.
    const jobs = await t.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ exportJobs { edges { node { status } } } }')}`,
      headers: { ...headers, accept: 'application/json' },
    });
    expect(jobs.statusCode).toBe(200);
    expect(jobs.headers.etag).toBeUndefined();
    expect(jobs.headers['cache-control']).toBe('no-store');
    const rpc = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } });
    expect(rpc.headers['cache-control']).toBe('no-store');
    expect(rpc.headers.etag).toBeUndefined();
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/transactions?limit=0', headers });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['cache-control']).toBe('no-store');
  });
});

describe('a page on a second origin, in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let base: string;
  let pages: Server;
  let pageOrigin: string;

  beforeAll(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    // The second origin: another port is another origin. It serves one empty page.
    pages = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>client</title>'));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(pageOrigin);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pages?.close(resolve));
  });

  it('calls JSON-RPC, REST (header and query key), SQL (JSON, CSV), GraphQL, and reads the exposed headers', async () => {
    const got = await page.evaluate(
      async ({ base, key }) => {
        const json = { 'content-type': 'application/json', 'x-api-key': key };
        const rpc = await fetch(`${base}/v1/rpc`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] }),
        });
        const rest = await fetch(`${base}/api/v1/transactions?limit=500`, { headers: { 'x-api-key': key } });
        const restBody = await rest.json();
        const byQuery = await fetch(`${base}/api/v1/stats?api-key=${encodeURIComponent(key)}`);
        const sql = await fetch(`${base}/v1/query`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ query: 'SELECT count() AS n FROM transactions' }),
        });
        const csv = await fetch(`${base}/api/v1/query`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ query: 'SELECT signature FROM transactions LIMIT 3', format: 'csv' }),
        });
        const gql = await fetch(`${base}/graphql`, { method: 'POST', headers: json, body: JSON.stringify({ query: '{ protocolStats { protocolName } }' }) });
        const noKey = await fetch(`${base}/api/v1/stats`);
        // A "simple" request (no preflight at all): text/plain body, key in the query.
        const plain = await fetch(`${base}/v1/rpc?api-key=${encodeURIComponent(key)}`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'getProtocols', params: [] }),
        });
        return {
          plain: (await plain.json()).result.length,
          rpc: (await rpc.json()).result,
          rpcRemaining: rpc.headers.get('x-ratelimit-remaining'),
          restCount: restBody.data.length,
          restNext: typeof restBody.meta.next,
          restTag: rest.headers.get('etag'),
          restFresh: rest.headers.get('x-data-newest-block-time'),
          byQuery: (await byQuery.json()).success,
          sql: (await sql.json()).data,
          csv: (await csv.text()).split('\r\n')[0],
          gql: (await gql.json()).data.protocolStats.length,
          noKey: [noKey.status, (await noKey.json()).error],
        };
      },
      { base, key },
    );
    expect(got.rpc).toEqual(expect.arrayContaining(['jupiter_v6']));
    expect(Number(got.rpcRemaining)).toBeGreaterThan(0);
    expect(got.restCount).toBe(500);
    expect(got.restNext).toBe('string');
    expect(got.restTag).toMatch(/^W\//);
    expect(got.restFresh).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(got.byQuery).toBe(true);
    expect(Number((got.sql as { n: string | number }[])[0]!.n)).toBeGreaterThan(1000);
    expect(got.csv).toBe('"signature"');
    expect(got.gql).toBeGreaterThan(0);
    expect(got.noKey).toEqual([401, 'Unauthorized']);
    expect(got.plain).toBe(got.rpc.length);
  });

  it('follows the GraphQL stream with an EventSource (key in the query: EventSource sends no headers)', async () => {
    const events = page.evaluate(
      ({ base, key }) =>
        new Promise<string>((resolve, reject) => {
          const q = encodeURIComponent('subscription { protocolActivity { protocolName count } }');
          const es = new EventSource(`${base}/graphql/stream?query=${q}&api-key=${encodeURIComponent(key)}`);
          const timer = setTimeout(() => {
            es.close();
            reject(new Error('no event within 20 s'));
          }, 20_000);
          es.addEventListener('next', (e) => {
            clearTimeout(timer);
            es.close();
            resolve((e as MessageEvent).data as string);
          });
          es.onerror = () => {
            if (es.readyState === EventSource.CLOSED) {
              clearTimeout(timer);
              reject(new Error('stream refused'));
            }
          };
        }),
      { base, key },
    );
    // Records land while the page listens.
    await new Promise((r) => setTimeout(r, 500));
    const now = Math.floor(Date.now() / 1000);
    await ingest(
      t.services,
      Array.from({ length: 5 }, (_, i) => ({
        signature: `${'4'.repeat(87)}${'abcde'[i]}`,
        slot: 2 + i,
        block_time: now - 30,
        program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
        protocol_name: 'jupiter_v6',
        instruction_type: 'route',
        fee: 5000,
        compute_units: 1000,
        accounts_count: 0,
        success: true,
      })),
    );
    const event = JSON.parse(await events) as { data: { protocolActivity: { protocolName: string; count: number } } };
    expect(event.data.protocolActivity.protocolName).toBe('jupiter_v6');
  });

  it('runs an export job and downloads its file, reading Content-Disposition', async () => {
    const got = await page.evaluate(
      async ({ base, key }) => {
        const json = { 'content-type': 'application/json', 'x-api-key': key };
        const created = await (
          await fetch(`${base}/v1/query/exports`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ query: 'SELECT signature, fee FROM transactions LIMIT 50', format: 'CSV' }),
          })
        ).json();
        let job = created;
        for (let i = 0; i < 200 && job.status !== 'COMPLETED' && job.status !== 'FAILED'; i += 1) {
          await new Promise((r) => setTimeout(r, 100));
          job = await (await fetch(`${base}/v1/query/exports/${job.id}`, { headers: { 'x-api-key': key } })).json();
        }
        const file = job.files.find((f: { name: string }) => f.name.endsWith('.csv'));
        const res = await fetch(`${base}/v1/query/exports/${job.id}/files/${file.name}`, { headers: { 'x-api-key': key } });
        return { status: job.status, disposition: res.headers.get('content-disposition'), lines: (await res.text()).trim().split('\n').length };
      },
      { base, key },
    );
    expect(got.status).toBe('COMPLETED');
    expect(got.disposition).toMatch(/^attachment; filename=/);
    expect(got.lines).toBe(51);
  });

  it("connects the MCP SDK's client (a browser-based agent), reads a 401's challenge and /llms.txt", async () => {
    // The SDK's client as a page script (esbuild: vitest's bundler, in node_modules).
    const { build } = await import('esbuild');
    const bundle = await build({
      stdin: {
        contents:
          "import { Client } from '@modelcontextprotocol/sdk/client/index.js';\nimport { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';\nglobalThis.mcp = { Client, StreamableHTTPClientTransport };",
        resolveDir: path.resolve(import.meta.dirname, '..', '..'),
      },
      bundle: true,
      format: 'iife',
      platform: 'browser',
      write: false,
      logLevel: 'error',
    });
    await page.evaluate(bundle.outputFiles[0]!.text);
    const got = await page.evaluate(
      async ({ base, key }) => {
        type Sdk = {
          Client: new (
            info: object,
          ) => {
            connect(t: unknown): Promise<void>;
            listTools(): Promise<{ tools: unknown[] }>;
            callTool(c: object): Promise<{ content: { text: string }[] }>;
            close(): Promise<void>;
          };
          StreamableHTTPClientTransport: new (url: URL, o?: object) => unknown;
        };
        const { Client, StreamableHTTPClientTransport } = (globalThis as unknown as { mcp: Sdk }).mcp;
        const url = new URL(`${base}/mcp`);
        const client = new Client({ name: 'page-agent', version: '1.0.0' });
        // The key as a bearer token (preflighted with mcp-protocol-version once initialized).
        await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
        const tools = (await client.listTools()).tools.length;
        const protocols = JSON.parse((await client.callTool({ name: 'getProtocols', arguments: {} })).content[0]!.text) as string[];
        await client.close();
        const refused = await new Client({ name: 'page-agent', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(url)).then(
          () => 'connected',
          (e: Error) => e.message,
        );
        const raw = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: '{}',
        });
        const llms = await fetch(`${base}/llms.txt`);
        return { tools, protocols, refused, status: raw.status, challenge: raw.headers.get('www-authenticate'), llms: (await llms.text()).slice(0, 2) };
      },
      { base, key },
    );
    expect(got.tools).toBeGreaterThan(10);
    expect(got.protocols).toContain('jupiter_v6');
    expect(got.refused).toContain('API key required');
    expect(got.status).toBe(401);
    expect(got.challenge).toMatch(/^ApiKey realm=/);
    expect(got.llms).toBe('# ');
  });
});

describe('a UTF-8 byte order mark before a JSON body', () => {
  it('is ignored alike by JSON-RPC, SQL (both paths) and GraphQL', async () => {
    const bom = (o: object): Buffer => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(o))]);
    const json = { ...headers, 'content-type': 'application/json' };
    const rpc = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: json,
      payload: bom({ jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] }),
    });
    expect(rpc.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: expect.arrayContaining(['jupiter_v6']) });
    for (const url of ['/v1/query', '/api/v1/query']) {
      const sql = await t.app.inject({ method: 'POST', url, headers: json, payload: bom({ query: 'SELECT 1 AS one' }) });
      expect(sql.statusCode, url).toBe(200);
      expect(sql.json().data).toEqual([{ one: 1 }]);
    }
    const gql = await t.app.inject({ method: 'POST', url: '/graphql', headers: json, payload: bom({ query: '{ protocolStats { protocolName } }' }) });
    expect(gql.statusCode).toBe(200);
    expect(gql.json().data.protocolStats.length).toBeGreaterThan(0);
    // Two marks are not one: the second is part of the text, which is then not JSON.
    const twice = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: json,
      payload: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bom({ jsonrpc: '2.0', id: 1, method: 'getProtocols' })]),
    });
    expect(twice.json().error.code).toBe(-32700);
  });
});
