// Freshness on every interface (DESIGN.md section 4): every analytics answer carries
// X-Data-Newest-Block-Time and X-Data-Ingested-At for the protocols its caller may see,
// from an in-memory watermark the pipeline moves on each committed write (no query per
// request), and which learns writes of another process (npm run ingest) by a bounded
// periodic refresh. GraphQL's extensions.freshness is checked on live events in
// graphql-subscriptions.test.ts (and on the stream's response headers here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import { DataVersion } from '../../warehouse/data-version.ts';
import { createLogger } from '../../core/logger.ts';
import { INGESTED_AT_HEADER, NEWEST_BLOCK_TIME_HEADER } from '../../api/services/freshness.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { demoRecords, FIXTURE_END, ingest } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

const REFRESH_MS = 300;
let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let active: string[];
let queries = 0;

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

async function newestVisible(): Promise<{ block: number; ingestedMs: number }> {
  const [r] = await t.services.wh.query<{ block: string; ingested: string }>(
    `SELECT toUnixTimestamp(max(block_time)) AS block, toUnixTimestamp64Milli(max(ingested_at)) AS ingested
     FROM transactions WHERE protocol_name IN {p:Array(String)}`,
    { params: { p: active } },
  );
  return { block: Number(r!.block), ingestedMs: Number(r!.ingested) };
}

/** One answer of each interface, as [interface, status, headers]. */
async function answers(): Promise<[string, number, Record<string, unknown>][]> {
  const rpc = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } });
  const rest = await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers });
  const sql = await t.app.inject({ method: 'POST', url: '/v1/query', headers, payload: { query: 'SELECT count() AS n FROM transactions' } });
  const restError = await t.app.inject({ method: 'GET', url: '/api/v1/analytics/protocols?protocol_name=nope', headers });
  return [
    ['rpc', rpc.statusCode, rpc.headers],
    ['rest', rest.statusCode, rest.headers],
    ['sql', sql.statusCode, sql.headers],
    ['rest error', restError.statusCode, restError.headers],
  ];
}

beforeAll(async () => {
  t = await startApp({ FRESHNESS_REFRESH_MS: String(REFRESH_MS) });
  headers = await apiKeyHeaders(t.app);
  const report = await ingest(t.services, await demoRecords(t.services, 400));
  expect(report.rejected).toEqual([]);
  active = await t.services.registry.activeNames();
});
afterAll(async () => t?.cleanup());

describe('freshness headers', () => {
  it('JSON-RPC, REST (answers and errors) and SQL say the newest visible block_time and ingest time', async () => {
    const truth = await newestVisible();
    for (const [iface, status, h] of await answers()) {
      expect(status, iface).toBeLessThan(500);
      expect(h[NEWEST_BLOCK_TIME_HEADER], iface).toBe(iso(truth.block));
      // The watermark takes the commit time, a few ms after the rows' ingested_at default.
      const at = Date.parse(String(h[INGESTED_AT_HEADER]));
      expect(at, iface).toBeGreaterThanOrEqual(truth.ingestedMs);
      expect(at - truth.ingestedMs, iface).toBeLessThan(2000);
    }
  });

  it('costs no query per request', async () => {
    const before = queries;
    const count = (): void => void (queries += 1);
    const wh = t.services.wh as unknown as { query: (...a: unknown[]) => Promise<unknown> };
    const original = wh.query.bind(wh);
    let freshnessReads = 0;
    wh.query = async (sql: unknown, ...rest: unknown[]) => {
      if (typeof sql === 'string' && sql.includes('ingest_freshness')) freshnessReads += 1;
      count();
      return original(sql, ...rest);
    };
    try {
      // Twenty answers well inside one refresh period: at most the periodic refresh reads the table.
      const t0 = Date.now();
      for (let i = 0; i < 20; i++) await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers });
      const periods = Math.ceil((Date.now() - t0) / REFRESH_MS) + 1;
      expect(freshnessReads).toBeLessThanOrEqual(periods);
      expect(queries).toBeGreaterThan(before);
    } finally {
      wh.query = original;
    }
  });

  it('moves with each write of this process at once', async () => {
    const later = (await demoRecords(t.services, 5, 99)).map((r, i) => ({ ...r, block_time: FIXTURE_END + 3600 + i, protocol_name: r.protocol_name }));
    const visible = later.filter((r) => active.includes(r.protocol_name));
    expect(visible.length).toBeGreaterThan(0);
    await ingest(t.services, later);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers });
    expect(res.headers[NEWEST_BLOCK_TIME_HEADER]).toBe(iso(Math.max(...visible.map((r) => r.block_time))));
  });

  it('learns writes of another process (npm run ingest) within the refresh period', async () => {
    // A second pipeline on the same store, unknown to the API's watermark: as the standalone ingest process writes.
    const other = new IngestPipeline(t.services.wh, t.services.registry, new DataVersion(), createLogger('silent'), {
      maxRecordBytes: 1 << 20,
      batchRows: 5000,
      writerId: 'other-process',
    });
    const rec = (await demoRecords(t.services, 50, 5)).find((r) => active.includes(r.protocol_name))!;
    const blockTime = FIXTURE_END + 7 * 86_400;
    const report = await other.ingest([{ value: { ...rec, block_time: blockTime }, position: { line: 1 } }], 'other');
    expect(report.accepted).toBe(1);
    // Counted in refresh periods of the service's own clock, not in wall-clock time: the
    // header changes once the refresh has run (at most two periods: one to start, one to read).
    const wh = t.services.wh as unknown as { query: (...a: unknown[]) => Promise<unknown> };
    const original = wh.query.bind(wh);
    let refreshes = 0;
    wh.query = async (sql: unknown, ...rest: unknown[]) => {
      if (typeof sql === 'string' && sql.includes('ingest_freshness')) refreshes += 1;
      return original(sql, ...rest);
    };
    let seen: unknown;
    try {
      for (;;) {
        seen = (await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } }))
          .headers[NEWEST_BLOCK_TIME_HEADER];
        if (seen === iso(blockTime)) break;
        await new Promise((r) => setTimeout(r, REFRESH_MS / 4));
      }
    } finally {
      wh.query = original;
    }
    expect(seen).toBe(iso(blockTime));
    expect(refreshes).toBeLessThanOrEqual(2);
  });

  it('ignores protocols the caller cannot see, and says nothing without a key', async () => {
    const before = (await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers })).headers[NEWEST_BLOCK_TIME_HEADER];
    const all = await t.services.registry.list();
    const hidden = all.find((p) => !p.active)!;
    const rec = (await demoRecords(t.services, 1, 11))[0]!;
    await ingest(t.services, [{ ...rec, protocol_name: hidden.protocolName, program_id: hidden.programId, block_time: FIXTURE_END + 30 * 86_400 }]);
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/stats', headers });
    expect(after.headers[NEWEST_BLOCK_TIME_HEADER]).toBe(before);
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/stats' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers[NEWEST_BLOCK_TIME_HEADER]).toBeUndefined();
    // Not an analytics answer: no figures.
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.headers[NEWEST_BLOCK_TIME_HEADER]).toBeUndefined();
  });

  it('GraphQL: the live stream states them too (events carry extensions.freshness)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql/stream',
      headers: { ...headers, accept: 'text/event-stream', 'content-type': 'application/json' },
      // An invalid document: the stream answers with its error and ends, so inject returns.
      payload: { query: 'subscription { protocolActivity(protocols: []) { count } }' },
    });
    expect(res.statusCode).toBe(200);
    const truth = await newestVisible();
    expect(res.headers[NEWEST_BLOCK_TIME_HEADER]).toBe(iso(truth.block));
    const event = JSON.parse(
      res.body
        .split('\n')
        .find((l) => l.startsWith('data: {'))!
        .slice(6),
    ) as { errors: unknown[]; extensions: { freshness: { newestBlockTime: string } } };
    expect(event.extensions.freshness.newestBlockTime).toBe(iso(truth.block));
  });
});
