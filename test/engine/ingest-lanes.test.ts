// Backfill and live together (issue 40): a backfill's batches wait while live records are
// queued, so a live call is stored before the backfill's queued batches; the backfill's
// progress is shown (GET /admin/ingest/status, /metrics); records stored through either lane
// are stored once, and the aggregates equal an independent count after the backfill is
// replayed. Ordering is asserted, never time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ndjsonRecords } from '../../ingest/ndjson.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { demoRecords, tableCounts } from '../support/fixtures.ts';
import { ADMIN_TOKEN, startApp } from '../support/services.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const METRICS_TOKEN = 'metrics-token-abcdefghijkl';
let records: IngestRecord[];
const ndjson = (rs: readonly IngestRecord[]): string => `${rs.map((r) => JSON.stringify(r)).join('\n')}\n`;

beforeAll(async () => {
  ctx = await startApp({ INGEST_MAX_BODY_BYTES: String(64 * 1024 * 1024), INGEST_PARSE_WORKERS: '0', METRICS_TOKEN });
  records = await demoRecords(ctx.services, 31_000, 40);
});
afterAll(async () => ctx.cleanup());

describe('backfill and live lanes', () => {
  it('stores a live call before the backfill batches queued ahead of it', async () => {
    const pipeline = ctx.services.pipeline;
    const backfill = records.slice(0, 30_000);
    const live = records.slice(30_000, 30_100);
    let liveDone = false;
    let backfillDoneAtLive = -1;
    const progress = pipeline.backfills.start('test-lanes', backfill.length);
    // The live call goes in once the backfill's first batch is stored: the rest of the
    // backfill (five batches) is then queued or being parsed, ahead of the live records.
    let started: Promise<unknown> | undefined;
    const watch = setInterval(() => {
      if (started === undefined && pipeline.backfills.list().find((b) => b.name === 'test-lanes')!.done > 0) {
        started = pipeline.ingest(ndjsonRecords(ndjson(live)), 'test-live').then(() => {
          liveDone = true;
          backfillDoneAtLive = pipeline.backfills.list().find((b) => b.name === 'test-lanes')!.done;
        });
      }
    }, 1);
    const report = await pipeline.ingest(ndjsonRecords(ndjson(backfill)), 'test-backfill', { lane: 'backfill', progress });
    clearInterval(watch);
    await started;
    expect(report.accepted).toBe(backfill.length);
    expect(liveDone).toBe(true);
    // The live records were stored while the backfill still had batches to write.
    expect(backfillDoneAtLive).toBeLessThan(backfill.length);
    expect(pipeline.backfills.list().find((b) => b.name === 'test-lanes')).toMatchObject({
      done: backfill.length,
      total: backfill.length,
      finishedAt: expect.any(Number),
    });
  });

  it('takes a backfill file over HTTP, shows its progress, and a replay of it changes no count', async () => {
    const file = ndjson(records.slice(0, 2_000));
    const before = await tableCounts(ctx.services);
    const res = await ctx.app.inject({ method: 'POST', url: '/admin/ingest?lane=backfill', headers: auth, payload: file });
    expect(res.statusCode).toBe(200);
    // Stored by the first test already: every record is a duplicate, nothing changes.
    expect(res.json()).toMatchObject({ accepted: 0, duplicates: 2_000, rejected: 0 });
    expect(await tableCounts(ctx.services)).toEqual(before);
    const status = await ctx.app.inject({ method: 'GET', url: '/admin/ingest/status', headers: auth });
    expect(status.statusCode).toBe(200);
    const body = status.json();
    expect(body.lanes).toEqual({ live: 0, backfill: 0 });
    expect(body.backfills[0]).toMatchObject({ name: expect.stringMatching(/^http:/), done: 2_000, total: 2_000, finishedAt: expect.any(Number) });
    const metrics = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.body).toMatch(/^txa_ingest_backfill_done_records\{backfill="http:1"\} 2000$/m);
    expect(metrics.body).toMatch(/^txa_ingest_backfill_total_records\{backfill="http:1"\} 2000$/m);
    expect(metrics.body).toMatch(/^txa_ingest_freshness_seconds_count\{lane="backfill"\} [1-9]/m);
    expect(metrics.body).toMatch(/^txa_ingest_stage_seconds_count\{stage="insert"\} [1-9]/m);
  });

  it('answers the status only to the operator', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/admin/ingest/status' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/admin/ingest/status', headers: { authorization: 'Bearer nope' } })).statusCode).toBe(403);
  });

  it('refuses a lane it does not know, with a 400 and no record stored', async () => {
    const before = await tableCounts(ctx.services);
    const res = await ctx.app.inject({ method: 'POST', url: '/admin/ingest?lane=express', headers: auth, payload: ndjson(records.slice(30_100, 30_110)) });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toMatch(/at .*\.ts:\d+/);
    expect(await tableCounts(ctx.services)).toEqual(before);
  });
});
