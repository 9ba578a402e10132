// GraphQL operations on a known data set: every operation and argument checked against the
// base table, and against REST and JSON-RPC for the same question (one analytics layer, one
// set of figures); aliases; a cursor walk while records arrive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityBucket, ProtocolStats } from '../../api/analytics/types.ts';
import type { FeeStats } from '../../api/analytics/presets/fee-stats.ts';
import { FIXTURE_END, FIXTURE_START } from '../support/fixtures.ts';
import { dataOf, graphqlClient } from '../support/graphql-client.ts';
import { restGet, type Envelope } from '../support/rest-client.ts';
import { b58, ingest, PROGRAM_OF } from '../support/fixtures.ts';
import { RpcClient } from '../support/rpc-client.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;
let active: string[];
let rpc: RpcClient;

beforeAll(async () => {
  ({ t, headers, active } = await startAppWithData(4000));
  rpc = await RpcClient.create(t.app);
});
afterAll(async () => t.cleanup());

const gql = graphqlClient(
  () => t.app,
  () => headers,
);
const rest = restGet(
  () => t.app,
  () => headers,
);
const sql = <T>(text: string, params: Record<string, unknown> = {}) => t.services.wh.query<T>(text, { params });

const DAYS = ['2024-12-29', '2024-12-30', '2024-12-31'] as const;
const dayStart = (i: number) => FIXTURE_START + i * 86_400;
const ALL_DAYS = `dateRange: { start: "${DAYS[0]}", end: "${DAYS[2]}" }`;

describe('protocolStats', () => {
  it('equals REST /analytics/protocols and JSON-RPC getProtocolStats per protocol, with uniquePrograms from the base table', async () => {
    const d = await dataOf(
      gql(`{ protocolStats(filters: { protocols: ["jupiter_v6", "pump_fun"], dateRange: { start: "${DAYS[1]}", end: "${DAYS[2]}" } }) {
      protocolName totalTransactions successfulTransactions failedTransactions successRate totalFees averageFee totalComputeUnits
      averageComputeUnits averageAccountsCount uniqueInstructionTypes uniquePrograms firstSeen lastSeen } }`),
    );
    expect(d.protocolStats.map((s: ProtocolStats) => s.protocolName)).toEqual(['jupiter_v6', 'pump_fun']);
    for (const s of d.protocolStats as (ProtocolStats & { uniquePrograms: number })[]) {
      const viaRest = await rest<Envelope<ProtocolStats>>(
        `/api/v1/analytics/protocols?protocol_name=${s.protocolName}&date_from=${DAYS[1]}&date_to=${DAYS[2]}`,
      );
      const viaRpc = await rpc.call<ProtocolStats>('getProtocolStats', [
        { protocolName: s.protocolName, blockTime: { gte: dayStart(1), lte: dayStart(3) - 1 } },
      ]);
      const { uniquePrograms, ...stats } = s;
      expect(stats).toEqual(viaRest.data);
      expect(stats).toEqual(viaRpc);
      const [ref] = await sql<{ n: string; p: string }>(
        `SELECT count() AS n, uniqExact(program_id) AS p FROM transactions WHERE protocol_name = {p:String}
         AND block_time >= toDateTime({a:UInt32}, 'UTC') AND block_time < toDateTime({b:UInt32}, 'UTC')`,
        { p: s.protocolName, a: dayStart(1), b: dayStart(3) },
      );
      expect(s.totalTransactions).toBe(Number(ref!.n));
      expect(uniquePrograms).toBe(Number(ref!.p));
    }
  });

  it('covers every available protocol without filters (the REST /stats question)', async () => {
    const d = await dataOf(gql('{ protocolStats { protocolName totalTransactions } }'));
    expect(d.protocolStats.map((s: ProtocolStats) => s.protocolName)).toEqual(active);
    const [ref] = await sql<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)}', { a: active });
    expect(d.protocolStats.reduce((a: number, s: ProtocolStats) => a + s.totalTransactions, 0)).toBe(Number(ref!.n));
  });
});

describe('signature', () => {
  it('answers a record with every field, date and hour; null for an unknown signature', async () => {
    const [row] = await sql<{
      signature: string;
      slot: string;
      bt: number;
      fee: string;
      cu: number;
      acc: number;
      it: string;
      p: string;
      prog: string;
      ok: boolean;
    }>(
      `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS bt, fee, compute_units AS cu, accounts_count AS acc,
              instruction_type AS it, protocol_name AS p, program_id AS prog, success AS ok
       FROM transactions WHERE protocol_name = 'whirlpool' AND instruction_index = 0 ORDER BY block_time LIMIT 1`,
    );
    const d = await dataOf(
      gql(
        `query($s: String!) { signature(signature: $s) { signature slot blockTime programId protocolName
      instructionType fee computeUnits accountsCount success date hour } none: signature(signature: "${'1'.repeat(88)}") { signature } }`,
        { s: row!.signature },
      ),
    );
    const when = new Date(row!.bt * 1000);
    expect(d.signature).toEqual({
      signature: row!.signature,
      slot: row!.slot,
      blockTime: row!.bt,
      programId: row!.prog,
      protocolName: row!.p,
      instructionType: row!.it,
      fee: Number(row!.fee),
      computeUnits: row!.cu,
      accountsCount: row!.acc,
      success: Boolean(row!.ok),
      date: when.toISOString().slice(0, 10),
      hour: when.getUTCHours(),
    });
    expect(d.none).toBeNull();
    const viaRpc = await rpc.call<Record<string, unknown>>('getTransaction', [row!.signature]);
    expect(d.signature).toMatchObject(viaRpc);
  });
});

describe('transactions without groupBy (records)', () => {
  it('lists the newest records like JSON-RPC getTransactions and REST /transactions, with filters', async () => {
    const d = await dataOf(
      gql(`{ transactions(filters: { protocols: ["pump_fun"], ${ALL_DAYS} }, pagination: { first: 25 }) {
      edges { cursor node { signature slot blockTime fee computeUnits protocolName instructionType count } } pageInfo { hasNextPage endCursor } } }`),
    );
    const viaRpc = await rpc.call<{ data: { signature: string; fee: number }[] }>('getTransactions', [
      { limit: 25, filters: { protocols: ['pump_fun'], blockTime: { gte: dayStart(0), lte: dayStart(3) - 1 } } },
    ]);
    const viaRest = await rest<Envelope<{ signature: string }[]>>(
      `/api/v1/transactions?protocol_name=pump_fun&date_from=${DAYS[0]}&date_to=${DAYS[2]}&limit=25`,
    );
    const nodes = d.transactions.edges.map((e: { node: unknown }) => e.node);
    expect(nodes.map((n: { signature: string }) => n.signature)).toEqual(viaRpc.data.map((x) => x.signature));
    expect(nodes.map((n: { signature: string }) => n.signature)).toEqual(viaRest.data.map((x) => x.signature));
    expect(nodes.every((n: { protocolName: string; count: unknown }) => n.protocolName === 'pump_fun' && n.count === null)).toBe(true);
    expect(d.transactions.pageInfo).toEqual({ hasNextPage: true, endCursor: d.transactions.edges[24].cursor });
  });

  it('honours status, instructionTypes, programIds, signatures and sort direction ASC', async () => {
    const d = await dataOf(
      gql(`{ transactions(filters: { status: FAILED, instructionTypes: ["sell"], programIds: ["${PROGRAM_OF.pump_fun}"] },
      sort: { direction: ASC }, pagination: { first: 1000 }) { edges { node { signature success instructionType blockTime } } } }`),
    );
    const [ref] = await sql<{ n: string }>(
      `SELECT count() AS n FROM transactions WHERE NOT success AND instruction_type = 'sell' AND program_id = {p:String}`,
      { p: PROGRAM_OF.pump_fun },
    );
    const nodes = d.transactions.edges.map((e: { node: { blockTime: number; success: boolean } }) => e.node);
    expect(nodes.length).toBe(Number(ref!.n));
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n: { success: boolean; instructionType: string }) => !n.success && n.instructionType === 'sell')).toBe(true);
    expect(nodes.map((n: { blockTime: number }) => n.blockTime)).toEqual([...nodes.map((n: { blockTime: number }) => n.blockTime)].sort((a, b) => a - b));
    const bySig = await dataOf(gql(`{ transactions(filters: { signatures: ["${nodes[0].signature}"] }) { edges { node { signature } } } }`));
    expect(bySig.transactions.edges.map((e: { node: { signature: string } }) => e.node.signature)).toContain(nodes[0].signature);
  });

  it('walks a whole set with cursors, no gap and no repeat, while records arrive', async () => {
    const filters = `filters: { protocols: ["jupiter_v4", "whirlpool"], ${ALL_DAYS} }, sort: { direction: ASC }`;
    const seen: string[] = [];
    let after: string | null = null;
    let arrived = 0;
    for (let pageNo = 0; pageNo < 200; pageNo++) {
      const d: any = await dataOf(
        gql(
          `query($after: String) { transactions(${filters}, pagination: { first: 37, after: $after }) {
        edges { node { signature blockTime } } pageInfo { hasNextPage endCursor } } }`,
          { after },
        ),
      );
      seen.push(...d.transactions.edges.map((e: { node: { signature: string; blockTime: number } }) => `${e.node.blockTime}:${e.node.signature}`));
      if (pageNo === 1 || pageNo === 3) {
        // New records at the end of the walked range (the last day), one protocol each.
        const records = [0, 1, 2].map((i) => ({
          signature: b58(`graphql-walk-${pageNo}-${i}`, 88),
          slot: 400_000_000 + pageNo * 10 + i,
          block_time: FIXTURE_END - 1 - pageNo * 10 - i,
          program_id: PROGRAM_OF.whirlpool!,
          protocol_name: 'whirlpool',
          instruction_type: 'swap',
          fee: 5000,
          compute_units: 1000,
          accounts: [b58('walk', 44)],
          success: true,
        }));
        await ingest(t.services, records);
        arrived += records.length;
      }
      if (!d.transactions.pageInfo.hasNextPage) break;
      after = d.transactions.pageInfo.endCursor;
    }
    const ref = await sql<{ k: string }>(
      `SELECT concat(toString(toUInt32(block_time)), ':', signature) AS k FROM transactions
       WHERE protocol_name IN ('jupiter_v4', 'whirlpool') AND block_time >= toDateTime({a:UInt32}, 'UTC') AND block_time < toDateTime({b:UInt32}, 'UTC')
       ORDER BY block_time, signature, instruction_index`,
      { a: dayStart(0), b: dayStart(3) },
    );
    expect(arrived).toBe(6);
    expect(seen).toEqual(ref.map((r) => r.k));
  });
});

interface GroupNode {
  protocol: string | null;
  hour: number | null;
  instructionType: string | null;
  count: number | null;
  sumFee: number | null;
  avgFee: number | null;
  minFee: number | null;
  maxFee: number | null;
  p50Fee: number | null;
  p95Fee: number | null;
  p99Fee: number | null;
  p95ComputeUnits: number | null;
  signature: string | null;
}
const GROUP_FIELDS = 'protocol hour instructionType count sumFee avgFee minFee maxFee p50Fee p95Fee p99Fee p95ComputeUnits signature';
const nodesOf = (d: any): GroupNode[] => d.transactions.edges.map((e: { node: GroupNode }) => e.node);

describe('transactions with groupBy and metrics (groups)', () => {
  it('groups by PROTOCOL with every metric: exact figures equal the base table, percentiles equal REST /analytics/fees', async () => {
    const d = await dataOf(
      gql(`{ transactions(filters: { ${ALL_DAYS} }, groupBy: [PROTOCOL],
      metrics: [COUNT, AVG_FEE, MIN_FEE, MAX_FEE, P50_FEE, P95_FEE, P99_FEE, SUM_FEE, P95_COMPUTE_UNITS]) { edges { node { ${GROUP_FIELDS} } } } }`),
    );
    const ref = await sql<{ p: string; n: string; s: string; lo: string; hi: string }>(
      `SELECT protocol_name AS p, count() AS n, sum(fee) AS s, min(fee) AS lo, max(fee) AS hi FROM transactions
       WHERE protocol_name IN {a:Array(String)} GROUP BY p ORDER BY n DESC, p DESC`,
      { a: active },
    );
    const nodes = nodesOf(d);
    expect(nodes.map((n) => [n.protocol, n.count, n.sumFee, n.minFee, n.maxFee])).toEqual(
      ref.map((r) => [r.p, Number(r.n), Number(r.s), Number(r.lo), Number(r.hi)]),
    );
    const fees = await rest<Envelope<FeeStats & { protocols: FeeStats[] }>>(`/api/v1/analytics/fees?date_from=${DAYS[0]}&date_to=${DAYS[2]}`);
    for (const n of nodes) {
      const f = fees.data.protocols.find((p) => p.protocolName === n.protocol)!;
      expect(n.avgFee).toBeCloseTo(f.averageFee, 6);
      for (const [mine, theirs] of [
        [n.p50Fee, f.p50Fee],
        [n.p95Fee, f.p95Fee],
        [n.p99Fee, f.p99Fee],
      ] as const)
        expect(mine! / theirs).toBeCloseTo(1, 2);
      expect(n.p95ComputeUnits).toBeGreaterThan(0);
      expect(n.signature).toBeNull();
      expect(n.hour).toBeNull();
    }
  });

  it('carries only the requested metrics; metrics without groupBy are one group of everything (REST /analytics/fees overall)', async () => {
    const d = await dataOf(
      gql(
        `{ transactions(filters: { protocols: ["pump_fun"], ${ALL_DAYS} }, metrics: [SUM_FEE, MIN_FEE, MAX_FEE, AVG_FEE]) { edges { node { ${GROUP_FIELDS} } } } }`,
      ),
    );
    const fees = await rest<Envelope<FeeStats>>(`/api/v1/analytics/fees?protocol_name=pump_fun&date_from=${DAYS[0]}&date_to=${DAYS[2]}`);
    const [n] = nodesOf(d);
    expect(nodesOf(d)).toHaveLength(1);
    expect(n).toMatchObject({ protocol: null, count: null, p95Fee: null, sumFee: fees.data.totalFees, minFee: fees.data.minFee, maxFee: fees.data.maxFee });
    expect(n!.avgFee).toBeCloseTo(fees.data.averageFee, 6);
  });

  it('groups by INSTRUCTION_TYPE like JSON-RPC getInstructionTypes', async () => {
    const d = await dataOf(
      gql(
        `{ transactions(filters: { protocols: ["jupiter_v6"] }, groupBy: [PROTOCOL, INSTRUCTION_TYPE], metrics: [COUNT, AVG_FEE]) { edges { node { ${GROUP_FIELDS} } } } }`,
      ),
    );
    const viaRpc = await rpc.call<{ instructionType: string; protocolName: string; count: number; averageFee: number }[]>('getInstructionTypes', [
      { protocolName: 'jupiter_v6' },
    ]);
    const nodes = nodesOf(d);
    expect(nodes.map((n) => [n.protocol, n.instructionType, n.count]).sort()).toEqual(viaRpc.map((x) => [x.protocolName, x.instructionType, x.count]).sort());
    for (const n of nodes) expect(n.avgFee).toBeCloseTo(viaRpc.find((x) => x.instructionType === n.instructionType)!.averageFee, 6);
  });

  it('groups by HOUR like JSON-RPC getProtocolActivity (hours with records)', async () => {
    const d = await dataOf(
      gql(
        `{ transactions(filters: { protocols: ["raydium_amm_v3"], dateRange: { start: "${DAYS[1]}", end: "${DAYS[1]}" } }, groupBy: [HOUR], metrics: [COUNT, SUM_FEE], sort: { field: COUNT }, pagination: { first: 24 }) { edges { node { ${GROUP_FIELDS} } } } }`,
      ),
    );
    const buckets = await rpc.call<ActivityBucket[]>('getProtocolActivity', [
      { protocolName: 'raydium_amm_v3', blockTime: { gte: dayStart(1), lte: dayStart(2) - 1 }, interval: 'hour' },
    ]);
    const byHour = new Map(nodesOf(d).map((n) => [n.hour, n]));
    expect(byHour.size).toBe(buckets.filter((b) => b.count > 0).length);
    for (const b of buckets.filter((x) => x.count > 0))
      expect([byHour.get(b.timestamp)?.count, byHour.get(b.timestamp)?.sumFee]).toEqual([b.count, b.totalFees]);
  });

  it('pages groups with cursors in sort order, ASC or DESC, with no gap or repeat', async () => {
    const ref = await sql<{ p: string; h: number; s: string }>(
      `SELECT protocol_name AS p, toUInt32(toStartOfHour(block_time)) AS h, sum(fee) AS s FROM transactions
       WHERE protocol_name IN {a:Array(String)} GROUP BY p, h ORDER BY s ASC, p ASC, h ASC`,
      { a: active },
    );
    const seen: [string, number, number][] = [];
    let after: string | null = null;
    for (;;) {
      const d: any = await dataOf(
        gql(
          `query($after: String) { transactions(groupBy: [PROTOCOL, HOUR], metrics: [SUM_FEE], sort: { field: SUM_FEE, direction: ASC },
        pagination: { first: 50, after: $after }) { edges { node { protocol hour sumFee } } pageInfo { hasNextPage endCursor } } }`,
          { after },
        ),
      );
      seen.push(...d.transactions.edges.map((e: { node: GroupNode }) => [e.node.protocol, e.node.hour, e.node.sumFee]));
      if (!d.transactions.pageInfo.hasNextPage) break;
      after = d.transactions.pageInfo.endCursor;
    }
    expect(seen).toEqual(ref.map((r) => [r.p, r.h, Number(r.s)]));
  });
});

describe('timeSeries', () => {
  const series = (bucket: string, extra = '', metrics = '[COUNT]') =>
    gql(`{ timeSeries(filters: { ${ALL_DAYS} ${extra} }, bucketBy: ${bucket}, metrics: ${metrics}) { timestamp value label } }`);

  it('HOUR and DAY buckets equal REST /analytics/time-series and JSON-RPC getProtocolActivity, empty buckets as 0', async () => {
    for (const [bucket, granularity] of [
      ['HOUR', 'hour'],
      ['DAY', 'day'],
    ] as const) {
      const d = await dataOf(series(bucket, ', protocols: ["jupiter_v4"]', '[COUNT, SUM_FEE]'));
      const viaRest = await rest<Envelope<ActivityBucket[]>>(
        `/api/v1/analytics/time-series?protocol_name=jupiter_v4&date_from=${DAYS[0]}&date_to=${DAYS[2]}&granularity=${granularity}`,
      );
      const viaRpc = await rpc.call<ActivityBucket[]>('getProtocolActivity', [
        { protocolName: 'jupiter_v4', blockTime: { gte: dayStart(0), lte: dayStart(3) - 1 }, interval: granularity },
      ]);
      expect(viaRest.data).toEqual(viaRpc);
      const points = d.timeSeries as { timestamp: number; value: number; label: string }[];
      expect(points.filter((p) => p.label === 'all:COUNT').map((p) => [p.timestamp, p.value])).toEqual(viaRest.data.map((b) => [b.timestamp, b.count]));
      expect(points.filter((p) => p.label === 'all:SUM_FEE').map((p) => [p.timestamp, p.value])).toEqual(viaRest.data.map((b) => [b.timestamp, b.totalFees]));
      if (granularity === 'hour') expect(viaRest.data.some((b) => b.count === 0)).toBe(true);
    }
  });

  it('WEEK and MONTH buckets start on Monday and on the 1st (UTC) and add up to the whole range; labels without groupBy say "all"', async () => {
    const [ref] = await sql<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)}', { a: active });
    const week = (await dataOf(series('WEEK'))).timeSeries as { timestamp: number; value: number; label: string }[];
    // 2024-12-29 is a Sunday: its week starts on Monday 2024-12-23; the next on 2024-12-30.
    expect(week.map((p) => [new Date(p.timestamp * 1000).toISOString().slice(0, 10), p.label])).toEqual([
      ['2024-12-23', 'all:COUNT'],
      ['2024-12-30', 'all:COUNT'],
    ]);
    expect(week.reduce((a, p) => a + p.value, 0)).toBe(Number(ref!.n));
    const month = (await dataOf(series('MONTH'))).timeSeries as { timestamp: number; value: number }[];
    expect(month.map((p) => [new Date(p.timestamp * 1000).toISOString().slice(0, 10), p.value])).toEqual([['2024-12-01', Number(ref!.n)]]);
  });

  it('groupBy names each series; INSTRUCTION_TYPE series come from the instruction view', async () => {
    const d = await dataOf(
      gql(
        `{ timeSeries(filters: { protocols: ["pump_fun"], ${ALL_DAYS} }, bucketBy: DAY, metrics: [COUNT, P95_FEE], groupBy: [PROTOCOL, INSTRUCTION_TYPE]) { timestamp value label } }`,
      ),
    );
    const ref = await sql<{ it: string; d: number; n: string }>(
      `SELECT instruction_type AS it, toUInt32(toStartOfDay(block_time)) AS d, count() AS n FROM transactions WHERE protocol_name = 'pump_fun' GROUP BY it, d`,
    );
    const points = d.timeSeries as { timestamp: number; value: number; label: string }[];
    for (const r of ref) expect(points.find((p) => p.label === `pump_fun/${r.it}:COUNT` && p.timestamp === r.d)?.value).toBe(Number(r.n));
    expect(new Set(points.map((p) => p.label.split(':')[1]))).toEqual(new Set(['COUNT', 'P95_FEE']));
  });
});

describe('failedTransactions', () => {
  it('groups failures by protocol, instruction type and error message, most frequent first, equal to the base table', async () => {
    const d = await dataOf(
      gql(`{ failedTransactions(filters: { ${ALL_DAYS} }, metrics: [COUNT, SUM_FEE], pagination: { first: 1000 }) {
      edges { node { protocolName instructionType errorMessage count sumFee avgFee } } pageInfo { hasNextPage } } }`),
    );
    const ref = await sql<{ p: string; it: string; e: string; n: string; s: string }>(
      `SELECT protocol_name AS p, instruction_type AS it, error_message AS e, count() AS n, sum(fee) AS s FROM transactions
       WHERE NOT success AND protocol_name IN {a:Array(String)} GROUP BY p, it, e ORDER BY n DESC, p DESC, it DESC, e DESC`,
      { a: active },
    );
    expect(ref.length).toBeGreaterThan(3);
    expect(
      d.failedTransactions.edges.map((e: any) => [
        e.node.protocolName,
        e.node.instructionType,
        e.node.errorMessage,
        e.node.count,
        e.node.sumFee,
        e.node.avgFee,
      ]),
    ).toEqual(ref.map((r) => [r.p, r.it, r.e, Number(r.n), Number(r.s), null]));
    expect(d.failedTransactions.pageInfo.hasNextPage).toBe(false);
  });

  it('filters by errorPattern (case-insensitive substring) and groups by protocol only; pages with cursors', async () => {
    const d = await dataOf(
      gql(
        '{ failedTransactions(filters: { errorPattern: "SLIPPAGE" }, groupBy: [PROTOCOL], pagination: { first: 2 }) { edges { cursor node { protocolName instructionType errorMessage count } } pageInfo { hasNextPage endCursor } } }',
      ),
    );
    const ref = await sql<{ p: string; e: string; n: string }>(
      `SELECT protocol_name AS p, error_message AS e, count() AS n FROM transactions WHERE NOT success AND positionCaseInsensitive(error_message, 'slippage') > 0
       AND protocol_name IN {a:Array(String)} GROUP BY p, e ORDER BY n DESC, p DESC, e DESC`,
      { a: active },
    );
    expect(ref.length).toBeGreaterThan(2);
    const all: unknown[] = d.failedTransactions.edges.map((e: any) => [e.node.protocolName, e.node.errorMessage, e.node.count]);
    expect(d.failedTransactions.edges[0].node.instructionType).toBeNull();
    let after = d.failedTransactions.pageInfo.endCursor;
    while (after) {
      const next: any = await dataOf(
        gql(
          'query($a: String) { failedTransactions(filters: { errorPattern: "SLIPPAGE" }, groupBy: [PROTOCOL], pagination: { first: 2, after: $a }) { edges { node { protocolName errorMessage count } } pageInfo { hasNextPage endCursor } } }',
          { a: after },
        ),
      );
      all.push(...next.failedTransactions.edges.map((e: any) => [e.node.protocolName, e.node.errorMessage, e.node.count]));
      after = next.failedTransactions.pageInfo.hasNextPage ? next.failedTransactions.pageInfo.endCursor : null;
    }
    expect(all).toEqual(ref.map((r) => [r.p, r.e, Number(r.n)]));
  });
});

describe('several operations in one request', () => {
  it('answers aliased queries side by side, each with its own arguments', async () => {
    const d = await dataOf(
      gql(`{
      first: protocolStats(filters: { protocols: ["jupiter_v6"], dateRange: { start: "${DAYS[0]}", end: "${DAYS[0]}" } }) { totalTransactions }
      last: protocolStats(filters: { protocols: ["jupiter_v6"], dateRange: { start: "${DAYS[2]}", end: "${DAYS[2]}" } }) { totalTransactions }
      whole: protocolStats(filters: { protocols: ["jupiter_v6"], ${ALL_DAYS} }) { totalTransactions }
      top: transactions(groupBy: [PROTOCOL], metrics: [COUNT], pagination: { first: 1 }) { edges { node { protocol count } } }
      cost: queryComplexity(groupBy: [PROTOCOL], metrics: [COUNT]) { score }
    }`),
    );
    const middle = await rpc.call<ProtocolStats>('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: { gte: dayStart(1), lte: dayStart(2) - 1 } }]);
    expect(d.first[0].totalTransactions + middle.totalTransactions + d.last[0].totalTransactions).toBe(d.whole[0].totalTransactions);
    expect(d.top.edges[0].node.count).toBeGreaterThan(d.whole[0].totalTransactions - 1);
    expect(d.cost.score).toBeGreaterThan(0);
  });
});

describe('identical queries answered again', () => {
  const Q = '{ a: protocolStats { protocolName totalTransactions } b: protocols }';

  it('gives the same answer and cost, charging every top-level field again', async () => {
    const first = await gql(Q);
    const second = await gql(Q);
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.extensions.cost).toEqual(first.body.extensions.cost);
    // Two top-level fields: two requests off the minute's allowance each time.
    expect(Number(first.headers['x-ratelimit-remaining']) - Number(second.headers['x-ratelimit-remaining'])).toBe(2);
  });

  it('never answers from before new records landed or a protocol was hidden', async () => {
    const before = await dataOf<{ a: { protocolName: string; totalTransactions: number }[]; b: string[] }>(gql(Q));
    const p = before.b[0]!;
    const count = (d: typeof before) => d.a.find((s) => s.protocolName === p)!.totalTransactions;
    await ingest(t.services, [
      {
        signature: b58('memo-check', 88),
        slot: 1,
        block_time: FIXTURE_START + 60,
        program_id: PROGRAM_OF[p],
        protocol_name: p,
        instruction_type: 'swap',
        fee: 5000,
        compute_units: 1000,
        accounts_count: 3,
        success: true,
      },
    ]);
    const after = await dataOf<typeof before>(gql(Q));
    expect(count(after)).toBe(count(before) + 1);
    const { adminHeaders } = await import('../support/api-key.ts');
    const hide = (active: boolean) =>
      t.app.inject({ method: 'PATCH', url: `/admin/protocols/${p}`, headers: { ...adminHeaders(), 'content-type': 'application/json' }, payload: { active } });
    expect((await hide(false)).statusCode).toBe(200);
    try {
      const hidden = await dataOf<typeof before>(gql(Q));
      expect(hidden.b).not.toContain(p);
      expect(hidden.a.map((s) => s.protocolName)).not.toContain(p);
    } finally {
      await hide(true);
    }
  });
});
