// REST /api/v1/analytics/{protocols,time-series,fees}: values equal independent SQL on the
// base table over [date_from 00:00:00, date_to 23:59:59] UTC and the JSON-RPC equivalents;
// parameters, edges and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityBucket, ProtocolStats } from '../api/analytics/types.ts';
import type { FeeStats } from '../api/analytics/fee-stats.ts';
import { FIXTURE_START } from './support/fixtures.ts';
import { restGet, type Envelope } from './support/rest-client.ts';
import { startAppWithData } from './support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;
let active: string[];

beforeAll(async () => {
  ({ t, headers, active } = await startAppWithData(4000));
});
afterAll(async () => t.cleanup());

const get = restGet(() => t.app, () => headers);

const DAYS = ['2024-12-29', '2024-12-30', '2024-12-31'] as const;
const dayStart = (i: number) => FIXTURE_START + i * 86_400;

interface ScanRow {
  n: string; ok: string; fees: string; fmin: string; fmax: string; cu: string; acc: string;
  types: string; first: number; last: number;
}

/** Independent reference: a scan of the base table. */
async function scan(protocols: readonly string[], from: number | undefined, to: number | undefined): Promise<ScanRow> {
  const [row] = await t.services.wh.query<ScanRow>(
    `SELECT count() AS n, countIf(success) AS ok, sum(fee) AS fees, min(fee) AS fmin, max(fee) AS fmax, sum(compute_units) AS cu,
            sum(accounts_count) AS acc, uniqExact(instruction_type) AS types,
            toUInt32(min(block_time)) AS first, toUInt32(max(block_time)) AS last
     FROM transactions WHERE protocol_name IN {p:Array(String)}
       AND block_time >= toDateTime({from:UInt32}, 'UTC') AND block_time <= toDateTime({to:UInt32}, 'UTC')`,
    { params: { p: protocols, from: from ?? 0, to: to ?? 4_000_000_000 } },
  );
  return row!;
}

describe('GET /api/v1/analytics/protocols', () => {
  it('equals a base-table scan over the inclusive day range, and getProtocolStats', async () => {
    const body = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=jupiter_v6&date_from=${DAYS[1]}&date_to=${DAYS[2]}`);
    const ref = await scan(['jupiter_v6'], dayStart(1), dayStart(3) - 1);
    const n = Number(ref.n);
    expect(n).toBeGreaterThan(0);
    expect(body.data).toEqual({
      protocolName: 'jupiter_v6',
      totalTransactions: n,
      successfulTransactions: Number(ref.ok),
      failedTransactions: n - Number(ref.ok),
      successRate: expect.closeTo((Number(ref.ok) / n) * 100, 9),
      totalFees: Number(ref.fees),
      averageFee: expect.closeTo(Number(ref.fees) / n, 6),
      totalComputeUnits: Number(ref.cu),
      averageComputeUnits: expect.closeTo(Number(ref.cu) / n, 6),
      averageAccountsCount: expect.closeTo(Number(ref.acc) / n, 9),
      uniqueInstructionTypes: Number(ref.types),
      firstSeen: Number(ref.first),
      lastSeen: Number(ref.last),
    });
    expect(body.meta).toMatchObject({ count: 1, protocolName: 'jupiter_v6', dateFrom: DAYS[1], dateTo: DAYS[2], blockTime: { gte: dayStart(1), lte: dayStart(3) - 1 } });
    expect(body.data).toEqual(await t.services.analytics.protocolStats('jupiter_v6', { gte: dayStart(1), lte: dayStart(3) - 1 }));
  });

  it('covers all time without dates, and one open side', async () => {
    const all = await get<Envelope<ProtocolStats>>('/api/v1/analytics/protocols?protocol_name=pump_fun');
    expect(all.data.totalTransactions).toBe(Number((await scan(['pump_fun'], undefined, undefined)).n));
    const from = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=pump_fun&date_from=${DAYS[2]}`);
    expect(from.data.totalTransactions).toBe(Number((await scan(['pump_fun'], dayStart(2), undefined)).n));
    const to = await get<Envelope<ProtocolStats>>(`/api/v1/analytics/protocols?protocol_name=pump_fun&date_to=${DAYS[0]}`);
    expect(to.data.totalTransactions).toBe(Number((await scan(['pump_fun'], undefined, dayStart(1) - 1)).n));
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
  it('hourly buckets for one day equal a base-table GROUP BY hour, zeros included', async () => {
    const body = await get<Envelope<ActivityBucket[]>>(`/api/v1/analytics/time-series?protocol_name=whirlpool&date_from=${DAYS[1]}&date_to=${DAYS[1]}`);
    expect(body.data).toHaveLength(24);
    const rows = await t.services.wh.query<{ h: number; n: string; ok: string; fees: string; cu: string }>(
      `SELECT toUInt32(toStartOfHour(block_time)) AS h, count() AS n, countIf(success) AS ok, sum(fee) AS fees, sum(compute_units) AS cu
       FROM transactions WHERE protocol_name = 'whirlpool' AND toDate(block_time) = {d:Date} GROUP BY h`, { params: { d: DAYS[1] } });
    const byHour = new Map(rows.map((r) => [Number(r.h), r]));
    body.data.forEach((b, i) => {
      const r = byHour.get(dayStart(1) + i * 3600);
      expect(b).toEqual({
        timestamp: dayStart(1) + i * 3600, date: DAYS[1], hour: i,
        count: Number(r?.n ?? 0), successCount: Number(r?.ok ?? 0), failedCount: Number(r?.n ?? 0) - Number(r?.ok ?? 0),
        totalFees: Number(r?.fees ?? 0), totalComputeUnits: Number(r?.cu ?? 0),
      });
    });
    expect(body.meta).toMatchObject({ count: 24, granularity: 'hour' });
  });

  it('daily buckets over all protocols equal the base table and getProtocolActivity', async () => {
    const body = await get<Envelope<ActivityBucket[]>>(`/api/v1/analytics/time-series?date_from=${DAYS[0]}&date_to=${DAYS[2]}&granularity=day`);
    expect(body.data.map((b) => b.date)).toEqual([...DAYS]);
    for (const [i, b] of body.data.entries()) {
      expect(b.hour).toBeUndefined();
      expect(b.count).toBe(Number((await scan(active, dayStart(i), dayStart(i + 1) - 1)).n));
    }
    expect(body.data).toEqual(await t.services.analytics.activity(undefined, { gte: dayStart(0), lte: dayStart(3) - 1 }, 'day'));
  });

  it.each([
    ['date_to=2024-12-30', /date_from is required/],
    ['date_from=2024-12-30', /date_to is required/],
    ['date_from=2024-12-30&date_to=2024-12-30&granularity=week', /granularity must be one of hour, day/],
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
    expect(body.data.reduce((s, b) => s + b.count, 0)).toBe(Number((await scan(active, undefined, undefined)).n));
  });
});

describe('GET /api/v1/analytics/fees', () => {
  async function exactQuantiles(protocols: readonly string[], from: number, to: number): Promise<number[]> {
    const [row] = await t.services.wh.query<{ q: number[] }>(
      `SELECT quantilesExact(0.5, 0.95, 0.99)(fee) AS q FROM transactions WHERE protocol_name IN {p:Array(String)}
       AND block_time >= toDateTime({from:UInt32}, 'UTC') AND block_time <= toDateTime({to:UInt32}, 'UTC')`,
      { params: { p: protocols, from, to } });
    return row!.q.map(Number);
  }

  const checkAgainst = async (stats: FeeStats, protocols: readonly string[], from: number, to: number) => {
    const ref = await scan(protocols, from, to);
    const n = Number(ref.n);
    expect(stats.totalTransactions).toBe(n);
    expect(stats.totalFees).toBe(Number(ref.fees));
    expect(stats.minFee).toBe(Number(ref.fmin));
    expect(stats.maxFee).toBe(Number(ref.fmax));
    expect(stats.averageFee).toBeCloseTo(Number(ref.fees) / n, 6);
    // t-digest percentiles are approximate: ordered, within [min, max], near the exact values.
    const exact = await exactQuantiles(protocols, from, to);
    const approx = [stats.p50Fee, stats.p95Fee, stats.p99Fee];
    expect(approx[0]!).toBeLessThanOrEqual(approx[1]!);
    expect(approx[1]!).toBeLessThanOrEqual(approx[2]!);
    approx.forEach((a, i) => {
      expect(a).toBeGreaterThanOrEqual(stats.minFee);
      expect(a).toBeLessThanOrEqual(stats.maxFee);
      expect(Math.abs(a - exact[i]!) / Math.max(exact[i]!, 1)).toBeLessThan(0.35);
    });
  };

  it('one protocol over a range: exact totals and extremes, close percentiles', async () => {
    const body = await get<Envelope<FeeStats & { protocols: FeeStats[] }>>(`/api/v1/analytics/fees?protocol_name=jupiter_v6&date_from=${DAYS[0]}&date_to=${DAYS[1]}`);
    expect(body.data.protocolName).toBe('jupiter_v6');
    await checkAgainst(body.data, ['jupiter_v6'], dayStart(0), dayStart(2) - 1);
    expect(body.data.protocols).toHaveLength(1);
    const { protocols, ...overall } = body.data;
    expect(protocols[0]).toEqual(overall);
  });

  it('all protocols together and each protocol', async () => {
    const body = await get<Envelope<FeeStats & { protocols: FeeStats[] }>>('/api/v1/analytics/fees');
    expect(body.data.protocolName).toBeNull();
    await checkAgainst(body.data, active, 0, 4_000_000_000);
    expect(body.data.protocols.map((p) => p.protocolName)).toEqual(active);
    for (const p of body.data.protocols) {
      const ref = await scan([p.protocolName!], undefined, undefined);
      expect(p.totalTransactions).toBe(Number(ref.n));
      expect(p.totalFees).toBe(Number(ref.fees));
      expect(p.maxFee).toBe(Number(ref.fmax));
    }
    expect(body.data.protocols.reduce((s, p) => s + p.totalTransactions, 0)).toBe(body.data.totalTransactions);
  });

  it('zeros for an empty range; 400 for bad parameters', async () => {
    const empty = await get<Envelope<FeeStats>>('/api/v1/analytics/fees?date_from=2020-01-01&date_to=2020-01-02');
    expect(empty.data).toMatchObject({ totalTransactions: 0, totalFees: 0, minFee: 0, maxFee: 0, p99Fee: 0 });
    expect((await get<{ message: string }>('/api/v1/analytics/fees?protocol_name=nope', 400)).message).toMatch(/protocol_name/);
    expect((await get<{ message: string }>('/api/v1/analytics/fees?date_to=31-12-2024', 400)).message).toMatch(/date_to/);
  });
});
