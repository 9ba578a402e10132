// Vary on every answer a cache may keep (docs/browser-clients.md, "Caching"): a browser's cache
// keys by URL and the request headers Vary names, so a cacheable answer must name every header
// that chose it. Before, tagged GET answers said `Cache-Control: private, max-age=2` and
// `Vary: Accept-Encoding` only: a page switching keys (or a shared machine) could be handed
// the previous key's answer to the same URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/server/app.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, 500);
});
afterAll(async () => t?.cleanup());

const ORIGIN = 'https://pages.example.net';

describe('caching: Vary names every header that chose a stored answer', () => {
  const varyOf = (res: { headers: Record<string, unknown> }): string[] =>
    String(res.headers.vary ?? '')
      .split(',')
      .map((v) => v.trim().toLowerCase());
  const CHOOSERS = ['x-api-key', 'authorization', 'accept', 'accept-encoding'];

  it('on every cacheable answer: REST and GraphQL GETs, their 304s, small answers and coded ones', async () => {
    const url = '/api/v1/stats';
    const plain = await t.app.inject({ method: 'GET', url, headers });
    expect(plain.headers['cache-control']).toMatch(/^private, max-age=/);
    expect(varyOf(plain)).toEqual(expect.arrayContaining(CHOOSERS));
    const coded = await t.app.inject({ method: 'GET', url: '/api/v1/transactions?limit=200', headers: { ...headers, 'accept-encoding': 'gzip' } });
    expect(coded.headers['content-encoding']).toBe('gzip');
    expect(varyOf(coded)).toEqual(expect.arrayContaining(CHOOSERS));
    // Each header once, however many steps named it.
    expect(varyOf(coded).filter((v) => v === 'accept-encoding')).toHaveLength(1);
    const revalidated = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': String(plain.headers.etag) } });
    expect(revalidated.statusCode).toBe(304);
    expect(varyOf(revalidated)).toEqual(expect.arrayContaining(CHOOSERS));
    const q = encodeURIComponent('{ protocolStats { protocolName totalTransactions } }');
    const gql = await t.app.inject({ method: 'GET', url: `/graphql?query=${q}`, headers: { ...headers, accept: 'application/json' } });
    expect(gql.headers.etag).toMatch(/^W\//);
    expect(varyOf(gql)).toEqual(expect.arrayContaining(CHOOSERS));
  });

  it('keeps Origin beside them when CORS answers a list of origins', async () => {
    const listed = await buildApp({ ...t.services, config: { ...t.services.config, http: { ...t.services.config.http, corsOrigins: [ORIGIN] } } });
    try {
      const res = await listed.inject({ method: 'GET', url: '/api/v1/stats', headers: { ...headers, origin: ORIGIN } });
      expect(res.statusCode).toBe(200);
      expect(varyOf(res)).toEqual(expect.arrayContaining(['origin', ...CHOOSERS]));
    } finally {
      await listed.close();
    }
  });

  it('on an export file: the key that downloaded it', async () => {
    const job = await t.app.inject({ method: 'POST', url: '/v1/query/exports', headers, payload: { query: 'SELECT 1 AS one', format: 'CSV' } });
    expect(job.statusCode, job.body).toBe(202);
    const id = job.json<{ id: string }>().id;
    let files: { name: string }[] = [];
    for (let i = 0; i < 400 && files.length === 0; i++) {
      const state = (await t.app.inject({ method: 'GET', url: `/v1/query/exports/${id}`, headers })).json<{ status: string; files?: { name: string }[] }>();
      if (state.status === 'COMPLETED') files = state.files ?? [];
      else await new Promise((r) => setTimeout(r, 50));
    }
    const file = await t.app.inject({ method: 'GET', url: `/v1/query/exports/${id}/files/${files[0]!.name}`, headers });
    expect(file.statusCode).toBe(200);
    expect(varyOf(file)).toEqual(expect.arrayContaining(['x-api-key', 'authorization']));
  });
});
