// /metrics scraped by a real Prometheus server (started here from the Debian binary)
// using METRICS_TOKEN: the expected series appear in its query API. Also the token rules
// and that no series carries a key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import { addAccessTestRoutes } from '../support/access-routes.ts';
import { adminHeaders, apiKeyHeaders } from '../support/api-key.ts';
import { startPrometheus, type PrometheusServer } from '../../scripts/daemons/prometheus-server.ts';
import { startApp } from '../support/services.ts';

const METRICS_TOKEN = 'metrics-token-abcdefghijkl';
let ctx: Awaited<ReturnType<typeof startApp>>;
let prom: PrometheusServer;
let keyHeaders: Record<string, string>;

beforeAll(async () => {
  ctx = await startApp({ METRICS_TOKEN });
  addAccessTestRoutes(ctx.app);
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = Number(new URL(address).port);

  // Traffic and data for the series to describe: requests of every outcome, an ingest.
  keyHeaders = await apiKeyHeaders(ctx.app, 'free');
  for (let i = 0; i < 3; i++) await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: keyHeaders });
  await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test' });
  await ctx.app.inject({ method: 'POST', url: '/graphql/__access-test', headers: keyHeaders, payload: { units: 500 } });
  const now = Math.floor(Date.now() / 1000);
  const ndjson = await demoRecordsNdjson(ctx.services.wh, { seed: 7, total: 50, offset: 0, count: 50, startTime: now - 3600, endTime: now });
  const ingest = await ctx.app.inject({ method: 'POST', url: '/admin/ingest', headers: adminHeaders(), payload: `${ndjson}{"broken": true}\n` });
  expect(ingest.json()).toMatchObject({ accepted: 50, rejected: 1 });

  prom = await startPrometheus({ host: '127.0.0.1', port, bearerToken: METRICS_TOKEN });
});

afterAll(async () => {
  await prom?.stop();
  await ctx?.cleanup();
});

/** Poll Prometheus until `expr` returns something (scrapes happen every second). */
async function eventually(expr: string, timeoutMs = 20_000) {
  const t0 = Date.now();
  for (;;) {
    const result = await prom.query(expr);
    if (result.length > 0) return result;
    if (Date.now() - t0 > timeoutMs) throw new Error(`no result for ${expr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('Prometheus scrapes /metrics', () => {
  it('the target is up', async () => {
    const [up] = await eventually('up{job="txa"} == 1');
    expect(up?.value[1]).toBe('1');
  });

  it('request counts and latency by interface, route, method and status', async () => {
    const ok = await eventually('txa_http_requests_total{interface="rest",route="/api/v1/__access-test",method="GET",status="200"}');
    expect(Number(ok[0]!.value[1])).toBeGreaterThanOrEqual(3);
    await eventually('txa_http_requests_total{interface="rest",status="401"}');
    await eventually('txa_http_request_duration_seconds_bucket{interface="rest",route="/api/v1/__access-test",le="+Inf"}');
    await eventually('txa_http_request_duration_seconds_count{interface="graphql",status="429"}');
  });

  it('rate-limit rejections by plan', async () => {
    const [r] = await eventually('txa_rate_limit_rejections_total{plan="free"}');
    expect(Number(r!.value[1])).toBe(1);
  });

  it('warehouse latency, ingest counts and batch sizes, data freshness, process metrics', async () => {
    await eventually('txa_warehouse_query_duration_seconds_count{operation="query",outcome="ok"}');
    await eventually('txa_warehouse_query_duration_seconds_count{operation="insert"}');
    const accepted = await eventually('txa_ingest_records_total{source="http",outcome="accepted"}');
    expect(Number(accepted[0]!.value[1])).toBe(50);
    const rejected = await eventually('txa_ingest_records_total{source="http",outcome="rejected"}');
    expect(Number(rejected[0]!.value[1])).toBe(1);
    await eventually('txa_ingest_batch_rows_count > 0');
    const blockAge = await eventually('txa_data_freshness_seconds{kind="block_time"}');
    expect(Number(blockAge[0]!.value[1])).toBeLessThan(3600 + 120);
    const ingestAge = await eventually('txa_data_freshness_seconds{kind="ingested_at"}');
    expect(Number(ingestAge[0]!.value[1])).toBeLessThan(120);
    await eventually('process_resident_memory_bytes');
    await eventually('nodejs_eventloop_lag_seconds');
  });

  it('no series names a key', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).not.toContain(keyHeaders['x-api-key']!);
    expect(res.body).not.toContain('test-free');
    expect(res.body).not.toMatch(/key_id|keyId|api_key=/);
  });
});

describe('/metrics access', () => {
  it('needs the metrics or admin token', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope-nope-nope-nope' } })).statusCode).toBe(403);
    expect((await ctx.app.inject({ method: 'GET', url: '/metrics', headers: keyHeaders })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders() })).statusCode).toBe(200);
  });
});
