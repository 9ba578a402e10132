import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_END, FIXTURE_START, demoRecords, ingestRecords } from './support/fixtures.ts';
import { startServices } from './support/services.ts';
import type { IngestRecord } from '../ingest/record-schema.ts';
import { planRange } from '../api/analytics/time-range.ts';

let s: Awaited<ReturnType<typeof startServices>>;
let records: IngestRecord[];

beforeAll(async () => {
  s = await startServices();
  records = await demoRecords(s, 6000, 11);
  await ingestRecords(s, records);
});
afterAll(async () => s.cleanup());

/** The reference: the same figures from the base table alone, with plain SQL. */
async function scanStats(protocol: string, gte?: number, lte?: number) {
  const [r] = await s.wh.query<Record<string, string | number>>(
    `SELECT count() n, countIf(success) ok, sum(fee) fees, sum(compute_units) cu, sum(accounts_count) acc,
            uniqExact(instruction_type) it, toUInt32(min(block_time)) first, toUInt32(max(block_time)) last
     FROM transactions WHERE protocol_name = {p:String}
       AND toUInt32(block_time) >= {gte:UInt32} AND toUInt32(block_time) <= {lte:UInt32}`,
    { params: { p: protocol, gte: gte ?? 0, lte: lte ?? 4_294_967_295 } });
  const n = Number(r!.n);
  return {
    protocolName: protocol,
    totalTransactions: n,
    successfulTransactions: Number(r!.ok),
    failedTransactions: n - Number(r!.ok),
    successRate: n ? (Number(r!.ok) / n) * 100 : 0,
    totalFees: Number(r!.fees),
    averageFee: n ? Number(r!.fees) / n : 0,
    totalComputeUnits: Number(r!.cu),
    averageComputeUnits: n ? Number(r!.cu) / n : 0,
    averageAccountsCount: n ? Number(r!.acc) / n : 0,
    uniqueInstructionTypes: Number(r!.it),
    firstSeen: n ? Number(r!.first) : 0,
    lastSeen: n ? Number(r!.last) : 0,
  };
}

describe('time range planning', () => {
  it('splits a ragged range into whole hours and two edges', () => {
    expect(planRange({ gte: 7200 + 10, lte: 5 * 3600 + 99 })).toEqual({
      view: { from: 3 * 3600, to: 5 * 3600 },
      edges: [{ from: 7210, to: 3 * 3600 }, { from: 5 * 3600, to: 5 * 3600 + 100 }],
    });
  });
  it('answers short ranges from the base table only, and open ranges from the view', () => {
    expect(planRange({ gte: 100, lte: 200 })).toEqual({ view: undefined, edges: [{ from: 100, to: 201 }] });
    expect(planRange({})).toEqual({ view: { from: undefined, to: undefined }, edges: [] });
    expect(planRange({ gte: 3600, lte: 7199 })).toEqual({ view: { from: 3600, to: 7200 }, edges: [] });
  });
});

describe('protocol stats', () => {
  it('over the full range equal the base-table figures', async () => {
    for (const p of ['jupiter_v6', 'pump_fun', 'whirlpool']) {
      expect(await s.analytics.protocolStats(p)).toEqual(await scanStats(p));
    }
  });

  it('are exact for ragged ranges (whole hours from the view, edges from the base table)', async () => {
    const ranges: [number, number][] = [
      [FIXTURE_START + 1234, FIXTURE_END - 4321],
      [FIXTURE_START + 3600 * 5 + 1, FIXTURE_START + 3600 * 7 - 1],
      [FIXTURE_START + 17, FIXTURE_START + 3000],
      [FIXTURE_START + 86_400 + 59, FIXTURE_START + 86_400 + 3600 + 58],
    ];
    // and some seeded pseudo-random ones
    let x = 12345;
    for (let i = 0; i < 8; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const a = FIXTURE_START + (x % (3 * 86_400));
      x = (x * 1103515245 + 12345) % 2 ** 31;
      ranges.push([a, a + (x % 40_000)]);
    }
    for (const [gte, lte] of ranges) {
      const got = await s.analytics.protocolStats('jupiter_v6', { gte, lte });
      const want = await scanStats('jupiter_v6', gte, lte);
      expect({ gte, lte, ...got }).toEqual({ gte, lte, ...want });
    }
  });

  it('an empty range gives zeros, and inactive or unknown protocols are refused', async () => {
    expect(await s.analytics.protocolStats('whirlpool', { gte: 10, lte: 20 })).toMatchObject({ totalTransactions: 0, successRate: 0, firstSeen: 0 });
    await expect(s.analytics.protocolStats('drift_v2')).rejects.toThrow(/unknown protocol "drift_v2"/);
    await expect(s.analytics.protocolStats('nope_v1')).rejects.toThrow(/unknown protocol/);
  });

  it('percentiles come from t-digest states and are close to the exact quantiles', async () => {
    const a = await s.analytics.protocolAggregate('jupiter_v6', { gte: FIXTURE_START + 999, lte: FIXTURE_END - 999 });
    const [exact] = await s.wh.query<{ q: number[] }>(
      `SELECT quantilesExact(0.5, 0.95, 0.99)(compute_units) q FROM transactions
       WHERE protocol_name = 'jupiter_v6' AND toUInt32(block_time) BETWEEN {a:UInt32} AND {b:UInt32}`,
      { params: { a: FIXTURE_START + 999, b: FIXTURE_END - 999 } });
    a!.cuQuantiles.forEach((v, i) => expect(Math.abs(v - exact!.q[i]!) / exact!.q[i]!).toBeLessThan(0.05));
  });
});

describe('activity, instruction types, top protocols', () => {
  it('hourly activity buckets equal base-table counts, zero-filled', async () => {
    const gte = FIXTURE_START + 1800;
    const lte = FIXTURE_START + 6 * 3600 + 1799;
    const buckets = await s.analytics.activity('pump_fun', { gte, lte }, 'hour');
    expect(buckets).toHaveLength(7);
    const rows = await s.wh.query<{ h: number; c: string; ok: string; f: string; cu: string }>(
      `SELECT toUInt32(toStartOfHour(block_time)) h, count() c, countIf(success) ok, sum(fee) f, sum(compute_units) cu
       FROM transactions WHERE protocol_name = 'pump_fun' AND toUInt32(block_time) BETWEEN {a:UInt32} AND {b:UInt32} GROUP BY h`,
      { params: { a: gte, b: lte } });
    const byHour = new Map(rows.map((r) => [Number(r.h), r]));
    for (const b of buckets) {
      const r = byHour.get(b.timestamp);
      expect(b).toEqual({
        timestamp: b.timestamp,
        date: new Date(b.timestamp * 1000).toISOString().slice(0, 10),
        hour: new Date(b.timestamp * 1000).getUTCHours(),
        count: Number(r?.c ?? 0),
        successCount: Number(r?.ok ?? 0),
        failedCount: Number(r?.c ?? 0) - Number(r?.ok ?? 0),
        totalFees: Number(r?.f ?? 0),
        totalComputeUnits: Number(r?.cu ?? 0),
      });
    }
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBeGreaterThan(0);
  });

  it('daily activity over all active protocols has no hour field and excludes inactive protocols', async () => {
    const buckets = await s.analytics.activity(undefined, { gte: FIXTURE_START, lte: FIXTURE_END - 1 }, 'day');
    expect(buckets).toHaveLength(3);
    expect(buckets[0]).not.toHaveProperty('hour');
    const [r] = await s.wh.query<{ c: string }>(
      `SELECT count() c FROM transactions WHERE protocol_name IN (SELECT protocol_name FROM protocols FINAL WHERE active)`);
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(Number(r!.c));
  });

  it('refuses more buckets than allowed', async () => {
    await expect(s.analytics.activity(undefined, { gte: 0, lte: 86_400 * 500 }, 'hour')).rejects.toThrow(/at most 10000/);
  });

  it('instruction types equal base-table figures over a ragged range', async () => {
    const gte = FIXTURE_START + 5000;
    const lte = FIXTURE_END - 7000;
    const got = await s.analytics.instructionTypes('whirlpool', { gte, lte }, 100);
    const rows = await s.wh.query<{ t: string; c: string; ok: string; f: string; cu: string }>(
      `SELECT instruction_type t, count() c, countIf(success) ok, sum(fee) f, sum(compute_units) cu FROM transactions
       WHERE protocol_name = 'whirlpool' AND toUInt32(block_time) BETWEEN {a:UInt32} AND {b:UInt32}
       GROUP BY t ORDER BY c DESC, t`, { params: { a: gte, b: lte } });
    expect(got).toEqual(rows.map((r) => ({
      instructionType: r.t, protocolName: 'whirlpool', count: Number(r.c), successRate: (Number(r.ok) / Number(r.c)) * 100,
      averageComputeUnits: Number(r.cu) / Number(r.c), averageFee: Number(r.f) / Number(r.c),
    })));
    expect(await s.analytics.instructionTypes(undefined, {}, 3)).toHaveLength(3);
  });

  it('top protocols sort by transactions, fees or success rate and hide inactive protocols', async () => {
    const byTx = await s.analytics.topProtocols({}, 'transactions', 10);
    expect(byTx[0]!.protocolName).toBe('jupiter_v6');
    expect(byTx.map((t) => t.protocolName)).not.toContain('raydium_amm_v4');
    expect(byTx.map((t) => t.transactionCount)).toEqual([...byTx.map((t) => t.transactionCount)].sort((a, b) => b - a));
    const byFees = await s.analytics.topProtocols({}, 'fees', 2);
    expect(byFees).toHaveLength(2);
    const byRate = await s.analytics.topProtocols({}, 'successRate', 10);
    expect(byRate.map((t) => t.successRate)).toEqual([...byRate.map((t) => t.successRate)].sort((a, b) => b - a));
  });
});

describe('transactions', () => {
  it('looks up a signature, returning its lowest instruction index', async () => {
    const second = records.find((r) => r.instruction_index === 1 && records.some((o) => o.signature === r.signature && o.instruction_index === 0))!;
    const first = records.find((r) => r.signature === second.signature && r.instruction_index === 0)!;
    const tx = await s.analytics.transaction(second.signature);
    if (first.protocol_name !== 'raydium_amm_v4' && first.protocol_name !== 'meteora_dlmm') {
      expect(tx).toMatchObject({ signature: first.signature, protocolName: first.protocol_name, instructionType: first.instruction_type, slot: String(first.slot) });
    }
    expect(await s.analytics.transaction('1'.repeat(88))).toBeNull();
  });

  it('pages through a filtered listing without skips or repeats, even while new records arrive', async () => {
    const filters = { protocols: ['pump_fun', 'whirlpool'], status: 'all' as const };
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.analytics.transactions({ filters, sortOrder: 'desc', limit: 250, cursor });
      for (const t of page.data) seen.push(`${t.signature}:${t.blockTime}`);
      cursor = page.next ?? undefined;
      if (pages === 1) {
        // A late record (older than the cursor) must show up in a later page exactly once.
        await ingestRecords(s, [{ ...records.find((r) => r.protocol_name === 'whirlpool')!, signature: '7'.repeat(88), block_time: FIXTURE_START + 5 }]);
      }
      pages += 1;
    } while (cursor);
    // A signature may carry several instructions (records): compare counts per signature.
    const stored = await s.wh.query<{ k: string; c: string }>(
      `SELECT concat(signature, ':', toString(toUInt32(block_time))) k, count() c FROM transactions
       WHERE protocol_name IN ('pump_fun', 'whirlpool') GROUP BY k`);
    const want = new Map(stored.map((r) => [r.k, Number(r.c)]));
    const got = new Map<string, number>();
    for (const k of seen) got.set(k, (got.get(k) ?? 0) + 1);
    expect(got).toEqual(want);
    expect(seen).toContain(`${'7'.repeat(88)}:${FIXTURE_START + 5}`);
    expect(pages).toBeGreaterThan(3);
  });

  it('applies every filter, alone and combined', async () => {
    const gte = FIXTURE_START + 10_000;
    const lte = FIXTURE_START + 50_000;
    const page = await s.analytics.transactions({
      filters: { blockTime: { gte, lte }, status: 'failed', protocols: ['jupiter_v6'], instructionTypes: ['route', 'sharedAccountsRoute'] },
      sortOrder: 'asc', limit: 1000,
    });
    const [r] = await s.wh.query<{ c: string }>(`SELECT count() c FROM transactions WHERE protocol_name = 'jupiter_v6' AND NOT success
      AND instruction_type IN ('route', 'sharedAccountsRoute') AND toUInt32(block_time) BETWEEN {a:UInt32} AND {b:UInt32}`, { params: { a: gte, b: lte } });
    expect(page.data.length).toBe(Number(r!.c));
    expect(page.data.every((t) => !t.success && t.blockTime >= gte && t.blockTime <= lte)).toBe(true);
    expect(page.data.map((t) => t.blockTime)).toEqual([...page.data.map((t) => t.blockTime)].sort((a, b) => a - b));

    const sigs = records.slice(0, 5).map((x) => x.signature);
    const bySig = await s.analytics.transactions({ filters: { signatures: sigs }, sortOrder: 'desc', limit: 100 });
    const visible = records.slice(0, 5).filter((x) => !['raydium_amm_v4', 'meteora_dlmm', 'phoenix_v1', 'drift_v2', 'kamino_lending'].includes(x.protocol_name));
    expect(new Set(bySig.data.map((t) => t.signature))).toEqual(new Set(visible.map((x) => x.signature)));

    const byProgram = await s.analytics.transactions({ filters: { programIds: ['whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc'] }, sortOrder: 'desc', limit: 5 });
    expect(byProgram.data.map((t) => t.protocolName)).toEqual(Array(5).fill('whirlpool'));
    const succeeded = await s.analytics.transactions({ filters: { status: 'succeeded' }, sortOrder: 'desc', limit: 300 });
    expect(succeeded.data.every((t) => t.success)).toBe(true);
    expect(succeeded.data).toHaveLength(300);
  });

  it('rejects a forged pagination token', async () => {
    await expect(s.analytics.transactions({ filters: {}, sortOrder: 'desc', limit: 5, cursor: 'garbage' })).rejects.toThrow(/pagination token/);
  });
});

describe('protocol registry', () => {
  it('activating a protocol makes its stored records visible', async () => {
    await expect(s.analytics.protocolStats('meteora_dlmm')).rejects.toThrow();
    await s.registry.setActive('meteora_dlmm', true);
    s.analytics.invalidate();
    const stats = await s.analytics.protocolStats('meteora_dlmm');
    expect(stats).toEqual(await scanStats('meteora_dlmm'));
    expect(stats.totalTransactions).toBeGreaterThan(0);
    await s.registry.setActive('meteora_dlmm', false);
    await expect(s.analytics.protocolStats('meteora_dlmm')).rejects.toThrow();
  });
});
