// REST /api/v1/analytics/{protocols,time-series,fees}: each answer equals the analytics
// layer's for the range [date_from 00:00:00, date_to 23:59:59] UTC (the figures themselves
// are checked against the oracle in analytics.test.ts); parameters, meta, edges and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityBucket, ProtocolStats } from '../../api/analytics/types.ts';
import type { FeeStats } from '../../api/analytics/presets/fee-stats.ts';
import { dayStart, FIXTURE_DAYS as DAYS } from '../support/fixtures.ts';
import { restGet, type Envelope } from '../support/rest-client.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;

beforeAll(async () => {
  ({ t, headers } = await startAppWithData(4000));
});
afterAll(async () => t.cleanup());

const get = restGet(
  () => t.app,
  () => headers,
);

const a = () => t.services.operatorAnalytics;
/** The answer as it travels: JSON. */
const wire = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('GET /api/v1/analytics/protocols', () => {
  it('equals the analytics answer over the inclusive day range, with the range in meta', async () => {
    const body = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=jupiter_v6&date_from=${DAYS[1]}&date_to=${DAYS[2]}`);
    expect(body.data.totalTransactions).toBeGreaterThan(0);
    expect(body.meta).toMatchObject({
      count: 1,
      protocolName: 'jupiter_v6',
      dateFrom: DAYS[1],
      dateTo: DAYS[2],
      blockTime: { gte: dayStart(1), lte: dayStart(3) - 1 },
    });
    expect(body.data).toEqual(wire(await a().protocolStats('jupiter_v6', { gte: dayStart(1), lte: dayStart(3) - 1 })));
  });

  it('covers all time without dates, and one open side', async () => {
    const all = await get<Envelope<ProtocolStats>>('/api/v1/analytics/protocols?protocol_name=pump_fun');
    expect(all.data).toEqual(wire(await a().protocolStats('pump_fun', {})));
    const from = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=pump_fun&date_from=${DAYS[2]}`);
    expect(from.data).toEqual(wire(await a().protocolStats('pump_fun', { gte: dayStart(2) })));
    const to = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=pump_fun&date_to=${DAYS[0]}`);
    expect(to.data).toEqual(wire(await a().protocolStats('pump_fun', { lte: dayStart(1) - 1 })));
    // Three different ranges, three different answers: the dates are not ignored.
    expect(new Set([all, from, to].map((b) => b.data.totalTransactions)).size).toBe(3);
  });

  it('answers zeros for a day without records', async () => {
    const body = await get<Envelope<ProtocolStats>>('/api/v1/analytics/protocols?protocol_name=pump_fun&date_from=2020-01-01&date_to=2020-01-01');
    expect(body.data).toMatchObject({ totalTransactions: 0, successRate: 0, averageFee: 0, firstSeen: 0, lastSeen: 0 });
  });

  it.each([
    ['', /protocol_name is required/],
    ['protocol_name=raydium_amm_v4', /protocol_name: unknown protocol/], // inactive: hidden
    ['protocol_name=nope', /protocol_name: unknown protocol/],
    ['protocol_name=pump_fun&date_from=2024-02-30', /date_from/],
    ['protocol_name=pump_fun&date_from=2024-12-31&date_to=2024-12-30', /date_from .* is after date_to/],
  ])('400 for "%s"', async (qs, pattern) => {
    const body = await get<{ error: string; message: string }>(`/api/v1/analytics/protocols?${qs}`, 400);
    expect(body.message).toMatch(pattern);
  });
});

describe('GET /api/v1/analytics/time-series', () => {
  it('hourly buckets for one day: the analytics answer, 24 of them', async () => {
    const body = await get<Envelope<ActivityBucket[]>>(`/api/v1/analytics/time-series?protocol_name=whirlpool&date_from=${DAYS[1]}&date_to=${DAYS[1]}`);
    expect(body.data).toHaveLength(24);
    expect(body.data[7]).toMatchObject({ timestamp: dayStart(1) + 7 * 3600, date: DAYS[1], hour: 7 });
    expect(body.data).toEqual(wire(await a().activity('whirlpool', { gte: dayStart(1), lte: dayStart(2) - 1 }, 'hour')));
    expect(body.meta).toMatchObject({ count: 24, granularity: 'hour' });
  });

  it('daily buckets over all protocols equal getProtocolActivity', async () => {
    const body = await get<Envelope<ActivityBucket[]>>(`/api/v1/analytics/time-series?date_from=${DAYS[0]}&date_to=${DAYS[2]}&granularity=day`);
    expect(body.data.map((b) => b.date)).toEqual([...DAYS]);
    for (const b of body.data) expect(b.hour).toBeUndefined();
    expect(body.data).toEqual(wire(await a().activity(undefined, { gte: dayStart(0), lte: dayStart(3) - 1 }, 'day')));
  });

  it.each([
    ['date_to=2024-12-30', /date_from is required/],
    ['date_from=2024-12-30', /date_to is required/],
    ['date_from=2024-12-30&date_to=2024-12-30&granularity=minute', /granularity must be one of hour, day, week, month/],
    ['date_from=2000-01-01&date_to=2024-12-30', /at most 10000 are allowed/],
    ['date_from=2024-12-31&date_to=2024-12-30', /is after date_to/],
    ['date_from=2024-12-30&date_to=2024-12-30&protocol_name=nope', /protocol_name: unknown protocol/],
  ])('400 for "%s"', async (qs, pattern) => {
    const body = await get<{ error: string; message: string }>(`/api/v1/analytics/time-series?${qs}`, 400);
    expect(body.error).toBe('Bad Request');
    expect(body.message).toMatch(pattern);
  });

  it('allows a long range by day', async () => {
    const body = await get<Envelope<ActivityBucket[]>>('/api/v1/analytics/time-series?date_from=2000-01-01&date_to=2024-12-31&granularity=day');
    expect(body.data).toEqual(wire(await a().activity(undefined, { gte: Date.UTC(2000, 0, 1) / 1000, lte: dayStart(3) - 1 }, 'day')));
    expect(body.data.reduce((n, b) => n + b.count, 0)).toBe((await a().globalStats()).totalTransactions);
  });
});

describe('GET /api/v1/analytics/fees', () => {
  it('one protocol over a range: the analytics answer, overall and as its one per-protocol item', async () => {
    const body = await get<Envelope<FeeStats & { protocols: FeeStats[] }>>(
      `/api/v1/analytics/fees?protocol_name=jupiter_v6&date_from=${DAYS[0]}&date_to=${DAYS[1]}`,
    );
    const { overall, protocols } = await a().feeStats('jupiter_v6', { gte: dayStart(0), lte: dayStart(2) - 1 });
    expect(overall.totalTransactions).toBeGreaterThan(0);
    expect(body.data).toEqual(wire({ ...overall, protocols }));
    expect(body.data.protocols).toHaveLength(1);
  });

  it('all protocols together and each protocol', async () => {
    const body = await get<Envelope<FeeStats & { protocols: FeeStats[] }>>('/api/v1/analytics/fees');
    expect(body.data.protocolName).toBeNull();
    const { overall, protocols } = await a().feeStats(undefined, {});
    expect(body.data).toEqual(wire({ ...overall, protocols }));
    expect(body.data.protocols.map((p) => p.protocolName)).toEqual(await a().protocols());
  });

  it('zeros for an empty range; 400 for bad parameters', async () => {
    const empty = await get<Envelope<FeeStats>>('/api/v1/analytics/fees?date_from=2020-01-01&date_to=2020-01-02');
    expect(empty.data).toMatchObject({ totalTransactions: 0, totalFees: 0, minFee: 0, maxFee: 0, p99Fee: 0 });
    expect((await get<{ message: string }>('/api/v1/analytics/fees?protocol_name=nope', 400)).message).toMatch(/protocol_name/);
    expect((await get<{ message: string }>('/api/v1/analytics/fees?date_to=31-12-2024', 400)).message).toMatch(/date_to/);
  });
});

describe('an unknown query parameter', () => {
  const raw = (url: string, h: Record<string, string> = headers) => t.app.inject({ method: 'GET', url, headers: h });

  it('is refused with a 400 naming it and the accepted ones, never ignored (a misspelt date would answer for all time)', async () => {
    const res = await raw(`/api/v1/analytics/time-series?protocol_name=jupiter_v6&date_form=${DAYS[1]}&date_to=${DAYS[1]}`);
    expect(res.statusCode).toBe(400);
    const body = res.json() as { message: string };
    expect(body.message).toContain('unknown query parameter "date_form"');
    expect(body.message).toContain('date_from');
    // A route that takes no query parameter says so.
    const byPath = await raw('/api/v1/stats?limit=5');
    expect(byPath.statusCode).toBe(400);
    expect((byPath.json() as { message: string }).message).toMatch(/unknown query parameter "limit"/);
  });

  it('does not include the api-key parameter, which every route takes', async () => {
    const key = headers['x-api-key']!;
    const res = await raw(`/api/v1/analytics/protocols?protocol_name=jupiter_v6&api-key=${encodeURIComponent(key)}`, {});
    expect(res.statusCode).toBe(200);
  });
});
