// The independent reference: every figure the service answers, recomputed with plain SQL
// over the base table `transactions` alone (never the materialized views, never the
// service's own code). Tests compare answers with these; the answer shapes are imported
// as types only, so a figure the service computes wrong cannot leak into its reference.
// Ranges are inclusive [gte, lte] in Unix seconds, like the analytics layer's TimeRange.
import type { Services } from '../../api/server/services.ts';
import type {
  ActivityBucket,
  FailedTransaction,
  InstructionTypeStats,
  ProtocolComparisonItem,
  ProtocolStats,
  TopProtocol,
} from '../../core/vocabulary/answers.ts';
import { ACTIVE_PROTOCOLS } from './fixtures.ts';

type Db = Pick<Services, 'wh'>;
export interface Range {
  gte?: number;
  lte?: number;
}
type Params = Record<string, unknown>;

const pct = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);
const avg = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

/** SQL condition for an inclusive range (parameters named o_gte / o_lte). */
function rangeSql(r: Range | undefined): { sql: string; params: Params } {
  const parts = ['1'];
  const params: Params = {};
  if (r?.gte !== undefined) {
    parts.push("block_time >= toDateTime({o_gte:UInt32}, 'UTC')");
    params.o_gte = r.gte;
  }
  if (r?.lte !== undefined) {
    parts.push("block_time <= toDateTime({o_lte:UInt32}, 'UTC')");
    params.o_lte = r.lte;
  }
  return { sql: parts.join(' AND '), params };
}

/** The active protocols, read from the registry table (sorted by name). */
export async function activeProtocols(s: Db): Promise<string[]> {
  const rows = await s.wh.query<{ p: string }>('SELECT protocol_name AS p FROM protocols FINAL WHERE active ORDER BY p');
  return rows.map((r) => r.p);
}

/** Raw totals of the records of `protocols` in `range`. */
export interface Totals {
  count: number;
  succeeded: number;
  fees: number;
  minFee: number;
  maxFee: number;
  computeUnits: number;
  accounts: number;
  instructionTypes: number;
  firstSeen: number;
  lastSeen: number;
  latestSlot: string;
}

export async function totals(s: Db, protocols: readonly string[], range?: Range): Promise<Totals> {
  const { sql, params } = rangeSql(range);
  const [r] = await s.wh.query<Record<string, string | number>>(
    `SELECT count() AS n, countIf(success) AS ok, sum(fee) AS fees, min(fee) AS fmin, max(fee) AS fmax, sum(compute_units) AS cu,
            sum(accounts_count) AS acc, uniqExact(instruction_type) AS types, toUInt32(min(block_time)) AS first,
            toUInt32(max(block_time)) AS last, toString(max(slot)) AS slot
     FROM transactions WHERE protocol_name IN {o_ps:Array(String)} AND ${sql}`,
    { params: { ...params, o_ps: protocols } },
  );
  const n = Number(r!.n);
  const v = (k: string) => (n === 0 ? 0 : Number(r![k]));
  return {
    count: n,
    succeeded: v('ok'),
    fees: v('fees'),
    minFee: v('fmin'),
    maxFee: v('fmax'),
    computeUnits: v('cu'),
    accounts: v('acc'),
    instructionTypes: v('types'),
    firstSeen: v('first'),
    lastSeen: v('last'),
    latestSlot: n === 0 ? '0' : String(r!.slot),
  };
}

/** Every field of a protocol's statistics. */
export async function protocolStats(s: Db, protocol: string, range?: Range): Promise<ProtocolStats> {
  const t = await totals(s, [protocol], range);
  return {
    protocolName: protocol,
    totalTransactions: t.count,
    successfulTransactions: t.succeeded,
    failedTransactions: t.count - t.succeeded,
    successRate: pct(t.succeeded, t.count),
    totalFees: t.fees,
    averageFee: avg(t.fees, t.count),
    totalComputeUnits: t.computeUnits,
    averageComputeUnits: avg(t.computeUnits, t.count),
    averageAccountsCount: avg(t.accounts, t.count),
    uniqueInstructionTypes: t.instructionTypes,
    firstSeen: t.firstSeen,
    lastSeen: t.lastSeen,
  };
}

/** One comparison item per protocol, in the order given. */
export async function protocolComparison(s: Db, protocols: readonly string[], range?: Range): Promise<ProtocolComparisonItem[]> {
  return Promise.all(
    protocols.map(async (p) => {
      const st = await protocolStats(s, p, range);
      return {
        protocolName: p,
        totalTransactions: st.totalTransactions,
        successRate: st.successRate,
        averageFee: st.averageFee,
        averageComputeUnits: st.averageComputeUnits,
        uniqueInstructionTypes: st.uniqueInstructionTypes,
      };
    }),
  );
}

/** Protocols with records in range, sorted by `sortBy` (descending, then by name), at most `limit`. */
export async function topProtocols(
  s: Db,
  protocols: readonly string[],
  range: Range | undefined,
  sortBy: 'transactions' | 'fees' | 'successRate',
  limit: number,
): Promise<TopProtocol[]> {
  const rows = await Promise.all(protocols.map(async (p) => ({ p, t: await totals(s, [p], range) })));
  const key = { transactions: (x: TopProtocol) => x.transactionCount, fees: (x: TopProtocol) => x.totalFees, successRate: (x: TopProtocol) => x.successRate }[
    sortBy
  ];
  return rows
    .filter(({ t }) => t.count > 0)
    .map(({ p, t }) => ({ protocolName: p, transactionCount: t.count, successRate: pct(t.succeeded, t.count), totalFees: t.fees }))
    .sort((a, b) => key(b) - key(a) || a.protocolName.localeCompare(b.protocolName))
    .slice(0, limit);
}

/** Exact quantiles (quantilesExact) of `column` over the records of `protocols` in range. */
export async function exactQuantiles(
  s: Db,
  column: 'fee' | 'compute_units',
  protocols: readonly string[],
  range: Range | undefined,
  qs: readonly number[],
): Promise<number[]> {
  const { sql, params } = rangeSql(range);
  const rows = await Promise.all(
    qs.map((q) =>
      s.wh.query<{ v: number }>(
        `SELECT quantileExact({o_q:Float64})(${column}) AS v FROM transactions WHERE protocol_name IN {o_ps:Array(String)} AND ${sql}`,
        { params: { ...params, o_ps: protocols, o_q: q } },
      ),
    ),
  );
  return rows.map(([r]) => Number(r!.v));
}

/**
 * Zero-filled activity buckets (hour or UTC day) over the records of `protocols` in the
 * range: one bucket per hour/day the range touches, counting only seconds inside it.
 */
export async function activityBuckets(s: Db, protocols: readonly string[], range: Required<Range>, interval: 'hour' | 'day'): Promise<ActivityBucket[]> {
  const step = interval === 'hour' ? 3600 : 86_400;
  const { sql, params } = rangeSql(range);
  const rows = await s.wh.query<Record<string, string | number>>(
    `SELECT intDiv(toUInt32(block_time), ${step}) * ${step} AS ts, count() AS n, countIf(success) AS ok, sum(fee) AS fees, sum(compute_units) AS cu
     FROM transactions WHERE protocol_name IN {o_ps:Array(String)} AND ${sql} GROUP BY ts`,
    { params: { ...params, o_ps: protocols } },
  );
  const byTs = new Map(rows.map((r) => [Number(r.ts), r]));
  const out: ActivityBucket[] = [];
  for (let ts = Math.floor(range.gte / step) * step; ts <= range.lte; ts += step) {
    const r = byTs.get(ts);
    const n = Number(r?.n ?? 0);
    const ok = Number(r?.ok ?? 0);
    const iso = new Date(ts * 1000).toISOString();
    out.push({
      timestamp: ts,
      date: iso.slice(0, 10),
      ...(interval === 'hour' ? { hour: Number(iso.slice(11, 13)) } : {}),
      count: n,
      successCount: ok,
      failedCount: n - ok,
      totalFees: Number(r?.fees ?? 0),
      totalComputeUnits: Number(r?.cu ?? 0),
    });
  }
  return out;
}

/** Instruction types by (protocol, type), most frequent first, then by protocol and type name. */
export async function instructionTypes(s: Db, protocols: readonly string[], range: Range | undefined, limit: number): Promise<InstructionTypeStats[]> {
  const { sql, params } = rangeSql(range);
  const rows = await s.wh.query<Record<string, string | number>>(
    `SELECT instruction_type AS t, protocol_name AS p, count() AS n, countIf(success) AS ok, sum(compute_units) AS cu, sum(fee) AS fees
     FROM transactions WHERE protocol_name IN {o_ps:Array(String)} AND ${sql}
     GROUP BY p, t ORDER BY n DESC, p, t LIMIT {o_lim:UInt32}`,
    { params: { ...params, o_ps: protocols, o_lim: limit } },
  );
  return rows.map((r) => {
    const n = Number(r.n);
    return {
      instructionType: String(r.t),
      protocolName: String(r.p),
      count: n,
      successRate: pct(Number(r.ok), n),
      averageComputeUnits: avg(Number(r.cu), n),
      averageFee: avg(Number(r.fees), n),
    };
  });
}

/** Failed records, newest first (block time, signature, instruction index), every field. */
export async function failedTransactions(
  s: Db,
  opts: { protocols?: readonly string[]; programId?: string; range?: Range; limit: number },
): Promise<FailedTransaction[]> {
  const { sql, params } = rangeSql(opts.range);
  const rows = await s.wh.query<Record<string, string | number>>(
    `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS bt, program_id, protocol_name, error_message, log_messages, raw_data
     FROM transactions WHERE NOT success AND protocol_name IN {o_ps:Array(String)} AND ${sql}
       AND ({o_pid:String} = '' OR program_id = {o_pid:String})
     ORDER BY block_time DESC, signature DESC, instruction_index DESC LIMIT {o_lim:UInt32}`,
    { params: { ...params, o_ps: opts.protocols ?? ACTIVE_PROTOCOLS, o_pid: opts.programId ?? '', o_lim: opts.limit } },
  );
  return rows.map((r) => ({
    signature: String(r.signature),
    slot: String(r.slot),
    blockTime: Number(r.bt),
    programId: String(r.program_id),
    protocolName: String(r.protocol_name),
    errorMessage: String(r.error_message),
    logMessages: String(r.log_messages),
    rawData: String(r.raw_data),
  }));
}

/** A Transaction object as the service answers it. */
export interface TxObject {
  signature: string;
  slot: string;
  blockTime: number;
  programId: string;
  protocolName: string;
  instructionType: string;
  fee: number;
  computeUnits: number;
  accountsCount: number;
  success: boolean;
}

/** The transaction listing's order: block time, then signature, then instruction index. */
/** JSON-RPC's listing filters as the analytics layer names them: SPEC's `blockTime` is its `range`. */
export const analyticsFilters = ({ blockTime, ...f }: { blockTime?: unknown }): object => (blockTime === undefined ? f : { ...f, range: blockTime });

export const LISTING_ORDER = {
  desc: 'block_time DESC, signature DESC, instruction_index DESC',
  asc: 'block_time ASC, signature ASC, instruction_index ASC',
} as const;
/**
 * An address listing's order: ledger order, the record id (migration 110: slot in its high
 * bits, then the transaction's position in its block, then instruction index), read from
 * the base table's own rid column; test/engine/record-id.test.ts checks each id against what the
 * record says; records sharing an id (a producer's repeated transaction_index) by signature.
 * (Not `slot`: the rows name the slot's text so, which sorts as text.)
 */
export const ADDRESS_ORDER = {
  asc: 'rid ASC, signature ASC',
  desc: 'rid DESC, signature DESC',
} as const;

/**
 * Records of the active protocols (ACTIVE_PROTOCOLS, a fresh registry's) matching the SQL
 * condition `where`, in `order`: the reference of every transaction listing.
 */
export async function transactionsWhere(s: Db, where = '1', params: Params = {}, order: string = LISTING_ORDER.desc): Promise<TxObject[]> {
  return (await rowsWhere(s, where, params, order)).map(({ instructionIndex: _i, ...tx }) => tx);
}

/** transactionsWhere with each record's instruction index (the address listing's rows carry it). */
async function rowsWhere(s: Db, where: string, params: Params, order: string): Promise<(TxObject & { instructionIndex: number })[]> {
  const rows = await s.wh.query<Record<string, string | number | boolean>>(
    `SELECT signature, instruction_index, toString(slot) AS slot, toUInt32(block_time) AS bt, program_id, protocol_name, instruction_type,
            fee, compute_units, accounts_count, success
     FROM transactions WHERE protocol_name IN {o_active:Array(String)} AND (${where}) ORDER BY ${order}`,
    { params: { ...params, o_active: ACTIVE_PROTOCOLS } },
  );
  return rows.map((r) => ({
    signature: String(r.signature),
    slot: String(r.slot),
    blockTime: Number(r.bt),
    programId: String(r.program_id),
    protocolName: String(r.protocol_name),
    instructionType: String(r.instruction_type),
    fee: Number(r.fee),
    computeUnits: Number(r.compute_units),
    accountsCount: Number(r.accounts_count),
    success: Boolean(r.success),
    instructionIndex: Number(r.instruction_index),
  }));
}

/** An address's records (it is one of the accounts, or the program id), matching `where`, with their instruction index. */
export async function addressTransactions(
  s: Db,
  address: string,
  where = '1',
  params: Params = {},
  order: string = ADDRESS_ORDER.asc,
): Promise<(TxObject & { instructionIndex: number })[]> {
  return rowsWhere(s, `(has(accounts, {o_addr:String}) OR program_id = {o_addr:String}) AND (${where})`, { ...params, o_addr: address }, order);
}

/** The visible record of a signature with the lowest instruction index, or null. */
export async function transaction(s: Db, signature: string): Promise<TxObject | null> {
  const [first] = await transactionsWhere(s, 'signature = {o_sig:String}', { o_sig: signature }, 'instruction_index');
  return first ?? null;
}

/** Records stored (visible or not) matching `where`: to check what a fixture holds. */
export async function countStored(s: Db, where = '1', params: Params = {}): Promise<number> {
  const [r] = await s.wh.query<{ n: string }>(`SELECT count() AS n FROM transactions WHERE ${where}`, { params });
  return Number(r!.n);
}

/** The fee figures of one set of protocols: exact totals and extremes, exact percentiles. */
export async function feeStats(s: Db, protocols: readonly string[], range?: Range) {
  const t = await totals(s, protocols, range);
  const [p50, p95, p99] = t.count === 0 ? [0, 0, 0] : await exactQuantiles(s, 'fee', protocols, range, [0.5, 0.95, 0.99]);
  return {
    totalTransactions: t.count,
    totalFees: t.fees,
    minFee: t.minFee,
    maxFee: t.maxFee,
    averageFee: avg(t.fees, t.count),
    p50Fee: p50!,
    p95Fee: p95!,
    p99Fee: p99!,
  };
}

/** Whole-store figures over the visible protocols, and each protocol's record count. */
export async function globalStats(s: Db, protocols: readonly string[]) {
  const t = await totals(s, protocols);
  const per = await Promise.all(protocols.map(async (p) => ({ protocolName: p, totalTransactions: (await totals(s, [p])).count })));
  return {
    totalTransactions: t.count,
    successfulTransactions: t.succeeded,
    failedTransactions: t.count - t.succeeded,
    successRate: pct(t.succeeded, t.count),
    totalFees: t.fees,
    averageFee: avg(t.fees, t.count),
    totalComputeUnits: t.computeUnits,
    averageComputeUnits: avg(t.computeUnits, t.count),
    firstSeen: t.firstSeen,
    lastSeen: t.lastSeen,
    latestSlot: t.latestSlot,
    protocolCount: protocols.length,
    protocols: per,
  };
}

/** The account (not program id) in most records: the demo data's busiest plain address. */
export async function busiestAccount(s: Db): Promise<string> {
  const [row] = await s.wh.query<{ a: string }>('SELECT arrayJoin(accounts) AS a, count() AS c FROM transactions GROUP BY a ORDER BY c DESC, a LIMIT 1');
  return row!.a;
}

/** A stored signature all of whose records belong to protocols outside `visible` (hidden), if any. */
export async function hiddenSignature(s: Db, visible: readonly string[]): Promise<string | undefined> {
  const [r] = await s.wh.query<{ signature: string }>(
    `SELECT signature FROM transactions GROUP BY signature HAVING countIf(protocol_name IN {o_v:Array(String)}) = 0
     ORDER BY signature LIMIT 1`,
    { params: { o_v: visible } },
  );
  return r?.signature;
}

// ---- What the views must hold: base-table aggregates at each view's grain --------------

/** protocol_hourly's figures per protocol and hour. */
export async function protocolHourly(s: Db): Promise<Record<string, string>[]> {
  return s.wh.query<Record<string, string>>(`
    SELECT protocol_name, toUInt32(toStartOfHour(block_time)) h, count() c, countIf(success) ok, sum(fee) f, min(fee) fmin,
           max(fee) fmax, sum(compute_units) cu, sum(accounts_count) acc, toUInt32(min(block_time)) fs, toUInt32(max(block_time)) ls,
           max(slot) slot, uniqExact(instruction_type) it, uniqExact(program_id) pr
    FROM transactions GROUP BY protocol_name, h ORDER BY protocol_name, h`);
}

/** instruction_hourly's figures per protocol and instruction type, over all time. */
export async function instructionTotals(s: Db): Promise<Record<string, string>[]> {
  return s.wh.query(`SELECT protocol_name, instruction_type, count() c, countIf(success) ok, sum(fee) f, min(fee) fmin,
      max(fee) fmax, sum(compute_units) cu, sum(accounts_count) acc FROM transactions GROUP BY 1, 2 ORDER BY 1, 2`);
}

/** failure_hourly's figures per protocol, instruction type and error message, over all time. */
export async function failureTotals(s: Db): Promise<Record<string, string>[]> {
  return s.wh.query(`SELECT protocol_name, instruction_type, error_message, count() c, sum(fee) f, sum(compute_units) cu
    FROM transactions WHERE NOT success GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
}
