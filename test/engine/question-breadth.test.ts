// The breadth of open questions (issue 27): group keys DATE, PROGRAM_ID, DAY_OF_WEEK, WEEK and
// MONTH beside PROTOCOL, HOUR and INSTRUCTION_TYPE; compute-unit and accounts metrics;
// record-level filters (slot, fee, compute-unit and accounts ranges, success, log messages);
// sorts by group keys; week and month buckets on REST and JSON-RPC. Every figure is checked
// against an independent reference: the raw records read back from the base table and
// grouped here, in plain TypeScript (weeks from Monday 00:00 UTC, ISO days of week), never
// the service's views or code. Ranges are ragged (mid-hour, a week cut mid-week) where the
// compiler is asked directly; GraphQL's ranges are whole days.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, readRows, type Question, type QuestionFilters } from '../../api/analytics/question/compile.ts';
import type { Dimension } from '../../api/analytics/question/model.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { FIXTURE_END, FIXTURE_START, ingest, ingestDemo } from '../support/fixtures.ts';
import { dataOf, graphqlClient } from '../support/graphql-client.ts';
import { startApp } from '../support/services.ts';

const DAY = 86_400;
/** A month before the window too, so weeks and months have several groups. */
const EARLY_START = FIXTURE_START - 40 * DAY;

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let active: string[];
let records: Rec[];

interface Rec {
  t: number;
  slot: number;
  protocol: string;
  instructionType: string;
  program: string;
  fee: number;
  cu: number;
  accounts: number;
  success: boolean;
  log: string;
}

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, 2500, 7);
  const early = await demoRecordsNdjson(t.services.wh, { seed: 11, total: 1000, offset: 0, count: 1000, startTime: EARLY_START, endTime: FIXTURE_START });
  await ingest(t.services, early.trim().split('\n'));
  active = await t.services.registry.activeNames();
  const rows = await t.services.wh.query<Record<string, string | number | boolean>>(
    `SELECT toUInt32(block_time) AS t, slot, protocol_name, instruction_type, program_id, fee, compute_units, accounts_count, success, log_messages
     FROM transactions WHERE protocol_name IN {ps:Array(String)}`,
    { params: { ps: active } },
  );
  records = rows.map((r) => ({
    t: Number(r.t),
    slot: Number(r.slot),
    protocol: String(r.protocol_name),
    instructionType: String(r.instruction_type),
    program: String(r.program_id),
    fee: Number(r.fee),
    cu: Number(r.compute_units),
    accounts: Number(r.accounts_count),
    success: r.success === true || r.success === 1 || r.success === 'true',
    log: String(r.log_messages),
  }));
});
afterAll(async () => t.cleanup());

const gql = graphqlClient(
  () => t.app,
  () => headers,
);

// ---- the reference: plain TypeScript over raw records -------------------------------------

const dayOf = (s: number): number => Math.floor(s / DAY);
/** ISO day of week, 1 = Monday (1970-01-01 was a Thursday). */
const isoDow = (s: number): number => ((dayOf(s) + 3) % 7) + 1;
const KEY: Record<Exclude<Dimension, 'errorMessage'>, (r: Rec) => string | number> = {
  protocol: (r) => r.protocol,
  instructionType: (r) => r.instructionType,
  program: (r) => r.program,
  time: (r) => Math.floor(r.t / 3600) * 3600,
  date: (r) => dayOf(r.t) * DAY,
  week: (r) => (dayOf(r.t) - (isoDow(r.t) - 1)) * DAY,
  month: (r) => {
    const d = new Date(r.t * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  },
  dayOfWeek: (r) => isoDow(r.t),
};

interface Figures {
  count: number;
  sumFee: number;
  minFee: number;
  maxFee: number;
  sumCu: number;
  minCu: number;
  maxCu: number;
  sumAccounts: number;
  cus: number[];
}

function reference(dims: readonly Dimension[], keep: (r: Rec) => boolean): Map<string, Figures> {
  const out = new Map<string, Figures>();
  for (const r of records.filter(keep)) {
    const id = JSON.stringify(dims.map((d) => KEY[d as keyof typeof KEY](r)));
    const f = out.get(id) ?? { count: 0, sumFee: 0, minFee: Infinity, maxFee: 0, sumCu: 0, minCu: Infinity, maxCu: 0, sumAccounts: 0, cus: [] };
    f.count += 1;
    f.sumFee += r.fee;
    f.minFee = Math.min(f.minFee, r.fee);
    f.maxFee = Math.max(f.maxFee, r.fee);
    f.sumCu += r.cu;
    f.minCu = Math.min(f.minCu, r.cu);
    f.maxCu = Math.max(f.maxCu, r.cu);
    f.sumAccounts += r.accounts;
    f.cus.push(r.cu);
    out.set(id, f);
  }
  return out;
}

const inRange =
  (gte: number, lte: number) =>
  (r: Rec): boolean =>
    r.t >= gte && r.t <= lte;
/** A ragged range: from mid-hour on Wednesday 2024-11-20 (its ISO week cut after two days) to mid-hour before the window's end. */
const RAGGED = { gte: Date.UTC(2024, 10, 20, 13, 27, 41) / 1000, lte: FIXTURE_END - 1800 - 17 };

const ALL_MEASURES = [
  'count',
  'sumFee',
  'minFee',
  'maxFee',
  'sumComputeUnits',
  'avgComputeUnits',
  'minComputeUnits',
  'maxComputeUnits',
  'sumAccounts',
  'avgAccounts',
];

async function ask(q: Question) {
  const st = compile(q)!;
  return { st, rows: readRows(q, await t.services.wh.query<Record<string, unknown>>(st.sql, { params: st.params })) };
}

function expectEqual(rows: Awaited<ReturnType<typeof ask>>['rows'], dims: readonly Dimension[], want: Map<string, Figures>): void {
  expect(want.size).toBeGreaterThan(0);
  expect(rows.length).toBe(want.size);
  for (const row of rows) {
    const w = want.get(JSON.stringify(dims.map((d) => row[d as keyof typeof row])));
    expect(w, JSON.stringify(row)).toBeDefined();
    const v = row.values;
    expect([v.count, v.sumFee, v.minFee, v.maxFee, v.sumComputeUnits, v.minComputeUnits, v.maxComputeUnits, v.sumAccounts]).toEqual([
      w!.count,
      w!.sumFee,
      w!.minFee,
      w!.maxFee,
      w!.sumCu,
      w!.minCu,
      w!.maxCu,
      w!.sumAccounts,
    ]);
    expect(v.avgComputeUnits).toBe(w!.sumCu / w!.count);
    expect(v.avgAccounts).toBe(w!.sumAccounts / w!.count);
  }
}

const DIMS: Dimension[] = ['protocol', 'time', 'instructionType', 'date', 'program', 'dayOfWeek', 'week', 'month'];
const filters = (extra: Partial<QuestionFilters> = {}): QuestionFilters => ({ protocols: active, range: RAGGED, ...extra });

describe('every group key, alone and in pairs, over a ragged range', () => {
  it.each(DIMS.map((d) => [d]))('%s: every metric equals the records grouped independently', async (d) => {
    const { st, rows } = await ask({ measures: ALL_MEASURES, dimensions: [d], filters: filters() });
    expectEqual(rows, [d], reference([d], inRange(RAGGED.gte, RAGGED.lte)));
    // Views answer what they keep; only the program id needs the records.
    expect(st.costShape.records === true).toBe(d === 'program');
    if (d !== 'program') expect(st.sql).toMatch(/_hourly/);
  });

  const pairs = DIMS.flatMap((a, i) => DIMS.slice(i + 1).map((b) => [a, b] as [Dimension, Dimension]));
  it(`all ${pairs.length} pairs of two keys equal the reference`, async () => {
    for (const dims of pairs) {
      const { rows } = await ask({ measures: ['count', 'sumFee', 'minComputeUnits', 'maxComputeUnits', 'sumAccounts'], dimensions: dims, filters: filters() });
      const want = reference(dims, inRange(RAGGED.gte, RAGGED.lte));
      expect(rows.length, dims.join('+')).toBe(want.size);
      for (const row of rows) {
        const w = want.get(JSON.stringify(dims.map((d) => row[d as keyof typeof row])))!;
        expect([row.values.count, row.values.sumFee, row.values.minComputeUnits, row.values.maxComputeUnits, row.values.sumAccounts], dims.join('+')).toEqual([
          w.count,
          w.sumFee,
          w.minCu,
          w.maxCu,
          w.sumAccounts,
        ]);
      }
    }
  });

  it('a week cut by the range counts only its records inside; weeks start on Monday 00:00 UTC', async () => {
    const { rows } = await ask({ measures: ['count'], dimensions: ['week'], filters: filters() });
    const first = rows.reduce((a, b) => (a.week! < b.week! ? a : b));
    expect(new Date(first.week! * 1000).toISOString()).toBe('2024-11-18T00:00:00.000Z');
    expect(new Date(first.week! * 1000).getUTCDay()).toBe(1);
    expect(first.values.count).toBe(records.filter((r) => r.t >= RAGGED.gte && r.t < Date.UTC(2024, 10, 25) / 1000).length);
  });

  it('compute-unit percentiles lie within 3 percentile points of the exact ones', async () => {
    const { rows } = await ask({ measures: ['p50ComputeUnits', 'p95ComputeUnits', 'p99ComputeUnits'], dimensions: ['protocol'], filters: filters() });
    const want = reference(['protocol'], inRange(RAGGED.gte, RAGGED.lte));
    for (const row of rows) {
      const cus = [...want.get(JSON.stringify([row.protocol]))!.cus].sort((a, b) => a - b);
      const at = (p: number) => cus[Math.min(cus.length - 1, Math.max(0, Math.floor(p * cus.length)))]!;
      for (const [m, p] of [
        ['p50ComputeUnits', 0.5],
        ['p95ComputeUnits', 0.95],
        ['p99ComputeUnits', 0.99],
      ] as const) {
        const v = row.values[m] as number;
        expect(v).toBeGreaterThanOrEqual(at(p - 0.03) - 1);
        expect(v).toBeLessThanOrEqual(at(Math.min(0.999, p + 0.03)) + 1);
      }
    }
  });
});

describe('record-level filters read the base table and equal the reference', () => {
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const medians = { slot: 0, cu: 0 };
  beforeAll(() => {
    medians.slot = med(records.map((r) => r.slot));
    medians.cu = med(records.map((r) => r.cu));
  });
  const cases: [string, () => Partial<QuestionFilters>, (r: Rec) => boolean][] = [
    // Bounds are decimal text (UInt64 past 2^53 stays exact), as GraphQL's BigInt scalar parses them.
    ['slot range', () => ({ ranges: { slot: { min: String(medians.slot) } } }), (r) => r.slot >= medians.slot],
    ['fee range', () => ({ ranges: { fee: { min: '6000', max: '20000' } } }), (r) => r.fee >= 6000 && r.fee <= 20_000],
    ['compute range', () => ({ ranges: { computeUnits: { max: String(medians.cu) } } }), (r) => r.cu <= medians.cu],
    ['accounts range', () => ({ ranges: { accountsCount: { min: '10', max: '14' } } }), (r) => r.accounts >= 10 && r.accounts <= 14],
    ['status failed', () => ({ status: 'failed' }), (r) => !r.success],
    ['status succeeded', () => ({ status: 'succeeded' }), (r) => r.success],
    ['log message', () => ({ logMessage: 'INSTRUCTION: ROUTE' }), (r) => r.log.toLowerCase().includes('instruction: route')],
  ];
  it.each(cases)('%s', async (_name, extra, keep) => {
    const { st, rows } = await ask({ measures: ALL_MEASURES, dimensions: ['protocol', 'week'], filters: filters(extra()) });
    expect(st.costShape.records).toBe(true);
    expect(st.sql).not.toMatch(/_hourly/);
    const want = reference(['protocol', 'week'], (r) => inRange(RAGGED.gte, RAGGED.lte)(r) && keep(r));
    expectEqual(rows, ['protocol', 'week'], want);
    // Not degenerate: the filter keeps some records and drops others.
    const kept = [...want.values()].reduce((n, f) => n + f.count, 0);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(records.filter(inRange(RAGGED.gte, RAGGED.lte)).length);
  });
});

describe('on GraphQL', () => {
  it('lists records in a slot range (the listing selects slot as text; the bound still compares numbers)', async () => {
    const slots = records.map((r) => r.slot).sort((a, b) => a - b);
    const [lo, hi] = [slots[Math.floor(slots.length / 4)]!, slots[Math.floor(slots.length / 2)]!];
    const data = await dataOf(
      gql(`{ transactions(filters: { slotRange: { min: ${lo}, max: ${hi} } }, pagination: { first: 1000 }, sort: { direction: ASC }) { nodes { slot } } }`),
    );
    const got = data.transactions.nodes.map((n: { slot: string | number }) => Number(n.slot));
    expect(got.length).toBeGreaterThan(0);
    for (const s of got) expect(s >= lo && s <= hi).toBe(true);
    // Found by schemathesis: an upper bound of 0 answered an internal error.
    expect((await dataOf(gql('{ transactions(filters: { slotRange: { max: 0.0 } }) { nodes { fee } } }'))).transactions.nodes).toEqual([]);
  });

  it('groups by DATE, WEEK, MONTH, DAY_OF_WEEK and PROGRAM_ID with their node fields, sorted by a key', async () => {
    const data = await dataOf(
      gql(`{ transactions(filters: { dateRange: { start: "2024-11-01", end: "2024-12-31" } }, groupBy: [MONTH, WEEK, DAY_OF_WEEK, DATE, PROGRAM_ID],
      metrics: [COUNT, MIN_COMPUTE_UNITS, MAX_COMPUTE_UNITS, SUM_ACCOUNTS, AVG_ACCOUNTS], sort: { field: DATE, direction: ASC }, pagination: { first: 1000 }) {
      edges { node { month week dayOfWeek date programId count minComputeUnits maxComputeUnits sumAccounts avgAccounts } } } }`),
    );
    const nodes = data.transactions.edges.map((e: { node: Record<string, unknown> }) => e.node);
    const from = Date.UTC(2024, 10, 1) / 1000;
    const want = reference(['month', 'week', 'dayOfWeek', 'date', 'program'], inRange(from, FIXTURE_END - 1));
    expect(nodes.length).toBe(want.size);
    const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    for (const n of nodes) {
      const key = [...want.keys()].find((k) => {
        const [m, w, dow, d, p] = JSON.parse(k) as [number, number, number, number, string];
        return iso(m).slice(0, 7) === n.month && iso(w) === n.week && dow === n.dayOfWeek && iso(d) === n.date && p === n.programId;
      });
      const f = want.get(key!)!;
      expect([n.count, n.minComputeUnits, n.maxComputeUnits, n.sumAccounts, n.avgAccounts]).toEqual([
        f.count,
        f.minCu,
        f.maxCu,
        f.sumAccounts,
        f.sumAccounts / f.count,
      ]);
    }
    // Sorted by the DATE key (the first time key grouped by: MONTH), ascending.
    const months = nodes.map((n: { month: string }) => n.month);
    expect(months).toEqual([...months].sort());
  });

  it('pages groups sorted by a key with cursors, no gap and no repeat', async () => {
    const q = (after?: string) =>
      gql(`{ transactions(groupBy: [PROTOCOL, DATE], sort: { field: PROTOCOL, direction: ASC }, pagination: { first: 7${after ? `, after: "${after}"` : ''} }) {
      edges { node { protocol date count } cursor } pageInfo { hasNextPage endCursor } } }`);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await dataOf(q(after))).transactions;
      seen.push(...page.edges.map((e: { node: { protocol: string; date: string } }) => `${e.node.protocol}|${e.node.date}`));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(reference(['protocol', 'date'], () => true).size);
  });

  it('filters groups by feeRange, computeRange, slotRange, accountsCount, success and logMessage together', async () => {
    const data = await dataOf(
      gql(`{ transactions(groupBy: [PROTOCOL], metrics: [COUNT, SUM_FEE], filters: { feeRange: { min: 5000 }, computeRange: { max: 900000 },
      slotRange: { min: 1 }, accountsCount: { min: 8 }, success: false, logMessage: "Instruction:" }) { edges { node { protocol count sumFee } } } }`),
    );
    const keep = (r: Rec) => r.fee >= 5000 && r.cu <= 900_000 && r.slot >= 1 && r.accounts >= 8 && !r.success && r.log.toLowerCase().includes('instruction:');
    const want = reference(['protocol'], keep);
    expect(
      Object.fromEntries(
        data.transactions.edges.map((e: { node: { protocol: string; count: number; sumFee: number } }) => [e.node.protocol, [e.node.count, e.node.sumFee]]),
      ),
    ).toEqual(Object.fromEntries([...want].map(([k, f]) => [JSON.parse(k)[0], [f.count, f.sumFee]])));
  });

  it('lists records filtered by ranges and log messages', async () => {
    const data = await dataOf(
      gql(`{ transactions(filters: { feeRange: { min: 5000, max: 30000 }, logMessage: "instruction: swap", dateRange: { start: "2024-12-29", end: "2024-12-31" } }, pagination: { first: 1000 }) {
      edges { node { signature fee } } } }`),
    );
    const want = records.filter((r) => r.t >= FIXTURE_START && r.fee >= 5000 && r.fee <= 30_000 && r.log.toLowerCase().includes('instruction: swap'));
    expect(want.length).toBeGreaterThan(0);
    expect(data.transactions.edges.length).toBe(want.length);
  });

  it('lists records sorted by FEE, COMPUTE_UNITS, ACCOUNTS_COUNT or SLOT, paged with cursors, no gap and no repeat', async () => {
    const day = FIXTURE_START + DAY;
    const want = records.filter((r) => r.protocol === 'pump_fun' && r.t >= day && r.t < day + DAY);
    for (const [field, of, dir] of [
      ['FEE', (r: Rec) => r.fee, 'ASC'],
      ['COMPUTE_UNITS', (r: Rec) => r.cu, 'DESC'],
      ['ACCOUNTS_COUNT', (r: Rec) => r.accounts, 'ASC'],
      ['SLOT', (r: Rec) => r.slot, 'DESC'],
    ] as const) {
      const seen: { signature: string; v: number }[] = [];
      let after: string | undefined;
      const key = { FEE: 'fee', COMPUTE_UNITS: 'computeUnits', ACCOUNTS_COUNT: 'accountsCount', SLOT: 'slot' }[field];
      for (;;) {
        const page = (
          await dataOf(
            gql(`{ transactions(filters: { protocols: ["pump_fun"], dateRange: { start: "2024-12-30", end: "2024-12-30" } }, sort: { field: ${field}, direction: ${dir} },
          pagination: { first: 97${after ? `, after: "${after}"` : ''} }) { edges { node { signature fee computeUnits accountsCount slot } } pageInfo { hasNextPage endCursor } } }`),
          )
        ).transactions;
        seen.push(...page.edges.map((e: { node: Record<string, string | number> }) => ({ signature: `${e.node.signature}`, v: Number(e.node[key]) })));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen.length, field).toBe(want.length);
      const values = seen.map((x) => x.v);
      const sorted = want.map(of).sort((a, b) => (dir === 'ASC' ? a - b : b - a));
      expect(values, field).toEqual(sorted);
    }
  });

  it('costs rise with what is asked: a percentile, then a record-level filter or PROGRAM_ID', async () => {
    const cost = async (args: string) => (await dataOf(gql(`{ queryComplexity(${args}) { score estimatedRows baseCost recommendations } }`))).queryComplexity;
    const plain = await cost('groupBy: [WEEK], metrics: [COUNT]');
    const pct = await cost('groupBy: [WEEK], metrics: [COUNT, P99_COMPUTE_UNITS]');
    const ranged = await cost('groupBy: [WEEK], metrics: [COUNT, P99_COMPUTE_UNITS], filters: { feeRange: { min: 1 } }');
    const program = await cost('groupBy: [WEEK, PROGRAM_ID], metrics: [COUNT, P99_COMPUTE_UNITS]');
    expect(pct.score).toBeGreaterThan(plain.score);
    expect(ranged.score).toBeGreaterThan(pct.score);
    expect(program.score).toBeGreaterThan(pct.score);
    expect(ranged.recommendations.some((r: string) => r.startsWith('drop what only records answer'))).toBe(true);
    expect(plain.recommendations.some((r: string) => r.startsWith('drop what only records answer'))).toBe(false);
  });
});

describe('week and month buckets on REST and JSON-RPC', () => {
  it('the OpenAPI and OpenRPC documents show them (derived from the catalog)', async () => {
    const api = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const series = api.paths['/api/v1/analytics/time-series'].get.parameters.find((p: { name: string }) => p.name === 'granularity');
    // A named enum, stated once and referenced (its default beside the reference).
    expect(series.schema).toMatchObject({ allOf: [{ $ref: '#/components/schemas/Granularity' }], default: 'hour' });
    expect(api.components.schemas.Granularity.enum).toEqual(['hour', 'day', 'week', 'month']);
    const rpc = (await t.app.inject({ url: '/v1/openrpc.json' })).json();
    const activity = rpc.methods.find((m: { name: string }) => m.name === 'getProtocolActivity');
    expect(JSON.stringify(activity.params)).toContain('"enum":["hour","day","week","month"]');
  });

  it('REST granularity=week and JSON-RPC interval "month" equal the reference; SPEC\'s values unchanged', async () => {
    const rest = await t.app.inject({
      url: '/api/v1/analytics/time-series?protocol_name=pump_fun&date_from=2024-11-20&date_to=2024-12-31&granularity=week',
      headers,
    });
    expect(rest.statusCode).toBe(200);
    const weeks = rest.json().data as { timestamp: number; count: number; hour?: number }[];
    const from = Date.UTC(2024, 10, 20) / 1000;
    const want = reference(['week'], (r) => r.protocol === 'pump_fun' && r.t >= from && r.t < FIXTURE_END);
    expect(weeks.map((w) => new Date(w.timestamp * 1000).getUTCDay())).toEqual(weeks.map(() => 1));
    expect(weeks.map((w) => [w.timestamp, w.count])).toEqual([...want].map(([k, f]) => [JSON.parse(k)[0], f.count]).sort((a, b) => a[0] - b[0]));
    expect(weeks.every((w) => w.hour === undefined)).toBe(true);

    const rpc = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers,
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocolActivity', params: [{ blockTime: { gte: from, lte: FIXTURE_END - 1 }, interval: 'month' }] },
    });
    const months = rpc.json().result as { timestamp: number; count: number }[];
    const wantMonths = reference(['month'], (r) => r.t >= from && r.t < FIXTURE_END);
    expect(months.map((m) => [m.timestamp, m.count])).toEqual([...wantMonths].map(([k, f]) => [JSON.parse(k)[0], f.count]).sort((a, b) => a[0] - b[0]));
  });
});
