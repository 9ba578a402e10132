// Per-protocol aggregates over any time range, merged from the protocol_hourly view for
// whole hours and from the base table for the ragged edges, in one statement. Every
// protocol-level answer (stats, comparison, performance, top, activity, fees) reads this.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import type { Statement } from './filter-conditions.ts';
import { edgesCondition, intervalCondition, planRange, type TimeRange } from './time-range.ts';
import { TABLES } from '../../warehouse/tables.ts';

export type Bucket = 'hour' | 'day';

export interface AggregateRequest {
  protocols: readonly string[];
  range: TimeRange;
  /** Group per protocol (default true); false merges all requested protocols. */
  perProtocol?: boolean;
  /** Also group by hour or day buckets. */
  bucket?: Bucket;
  /** Include the exact count of distinct instruction types. */
  distinct?: boolean;
  /** Include the exact count of distinct program ids. */
  programs?: boolean;
  /** Include fee minimum and maximum and the highest slot. */
  extremes?: boolean;
  /** Include t-digest percentiles of compute units and fees. */
  percentiles?: boolean;
}

export interface ProtocolAggregate {
  protocolName: string | undefined;
  bucket: number | undefined;
  txCount: number;
  successCount: number;
  feeSum: number;
  feeMin: number;
  feeMax: number;
  cuSum: number;
  accountsSum: number;
  firstSeen: number;
  lastSeen: number;
  maxSlot: string;
  instructionTypes: number;
  programs: number;
  cuQuantiles: [number, number, number];
  feeQuantiles: [number, number, number];
}

const Q = '0.5, 0.95, 0.99';

interface Row {
  protocol_name?: string;
  b?: number;
  tx_count: string;
  success_count: string;
  fee_sum: string;
  fee_min?: string;
  fee_max?: string;
  cu_sum: string;
  accounts_sum: string;
  first_seen: number;
  last_seen: number;
  max_slot?: string;
  instruction_types?: string;
  programs?: string;
  cu_q?: number[];
  fee_q?: number[];
}

const triple = (xs: number[] | undefined): [number, number, number] => [xs?.[0] ?? 0, xs?.[1] ?? 0, xs?.[2] ?? 0];

export async function aggregateProtocols(wh: Warehouse, req: AggregateRequest): Promise<ProtocolAggregate[]> {
  const statement = aggregateStatement(req);
  if (statement === undefined) return [];
  const rows = await wh.query<Row>(statement.sql, { params: statement.params });
  return rows.map(toAggregate);
}

/** The one statement aggregateProtocols runs (undefined when nothing can match), for the cost model too. */
export function aggregateStatement(req: AggregateRequest): Statement | undefined {
  if (req.protocols.length === 0) return undefined;
  const perProtocol = req.perProtocol ?? true;
  const plan = planRange(req.range);
  const viewBucket = req.bucket === 'day' ? 'toStartOfDay(hour_start)' : 'hour_start';
  const rawBucket = req.bucket === 'day' ? 'toStartOfDay(block_time)' : 'toStartOfHour(block_time)';

  // Column lists line up position by position across the two UNION ALL branches. Every
  // column read from the view costs about half a millisecond, so each answer asks only for
  // the ones it uses.
  const viewCols = ['protocol_name', `${viewBucket} AS b`, 'tx_count', 'success_count', 'fee_sum',
    'cu_sum', 'accounts_sum', 'first_seen', 'last_seen'];
  const rawCols = ['protocol_name', `${rawBucket} AS b`, 'count() AS tx_count', 'countIf(success) AS success_count',
    'sum(fee) AS fee_sum', 'sum(compute_units) AS cu_sum',
    'sum(accounts_count) AS accounts_sum', 'min(block_time) AS first_seen', 'max(block_time) AS last_seen'];
  const outCols = ['sum(tx_count) AS tx_count', 'sum(success_count) AS success_count', 'sum(fee_sum) AS fee_sum',
    'sum(cu_sum) AS cu_sum', 'sum(accounts_sum) AS accounts_sum',
    'toUInt32(min(first_seen)) AS first_seen', 'toUInt32(max(last_seen)) AS last_seen'];
  if (req.extremes) {
    viewCols.push('fee_min', 'fee_max', 'max_slot');
    rawCols.push('min(fee) AS fee_min', 'max(fee) AS fee_max', 'max(slot) AS max_slot');
    outCols.push('min(fee_min) AS fee_min', 'max(fee_max) AS fee_max', 'max(max_slot) AS max_slot');
  }
  if (req.distinct) {
    viewCols.push('instruction_types');
    rawCols.push('uniqExactState(toString(instruction_type)) AS instruction_types');
    outCols.push('uniqExactMerge(instruction_types) AS instruction_types');
  }
  if (req.programs) {
    viewCols.push('programs');
    rawCols.push('uniqExactState(toString(program_id)) AS programs');
    outCols.push('uniqExactMerge(programs) AS programs');
  }
  if (req.percentiles) {
    viewCols.push('cu_digest', 'fee_digest');
    rawCols.push(`quantilesTDigestState(${Q})(compute_units) AS cu_digest`, `quantilesTDigestState(${Q})(fee) AS fee_digest`);
    outCols.push(`quantilesTDigestMerge(${Q})(cu_digest) AS cu_q`, `quantilesTDigestMerge(${Q})(fee_digest) AS fee_q`);
  }

  const params: Record<string, unknown> = { protocols: req.protocols };
  const branches: string[] = [];
  let viewWhere: string | undefined;
  if (plan.view) {
    const cond = intervalCondition('hour_start', plan.view, 'view');
    Object.assign(params, cond.params);
    viewWhere = `protocol_name IN {protocols:Array(String)} AND ${cond.sql}`;
    branches.push(`SELECT ${viewCols.join(', ')} FROM ${TABLES.protocolHourly} WHERE ${viewWhere}`);
  }
  if (plan.edges.length > 0) {
    const cond = edgesCondition('block_time', plan.edges);
    Object.assign(params, cond.params);
    branches.push(`SELECT ${rawCols.join(', ')} FROM ${TABLES.transactions}
      WHERE protocol_name IN {protocols:Array(String)} AND (${cond.sql})
      GROUP BY protocol_name, b`);
  }
  if (branches.length === 0) return undefined;

  // Hour-aligned ranges (the common case: open or whole-hour bounds) read the view
  // directly; the UNION ALL wrapper is only needed to merge in ragged edges, and skipping
  // it saves a few milliseconds per answer.
  const direct = viewWhere !== undefined && plan.edges.length === 0;
  const bucketKey = direct ? viewBucket : 'b';
  const keys = [...(perProtocol ? ['protocol_name'] : []), ...(req.bucket ? ['b'] : [])];
  const keySelect = [...(perProtocol ? ['protocol_name'] : []), ...(req.bucket ? [`toUInt32(${bucketKey}) AS b`] : [])];
  const source = direct ? `protocol_hourly WHERE ${viewWhere}` : `(${branches.join('\nUNION ALL\n')})`;
  const sql = `SELECT ${[...keySelect, ...outCols].join(', ')}
    FROM ${source}
    ${keys.length > 0 ? `GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')}` : 'HAVING tx_count > 0'}`;

  return { sql, params };
}

function toAggregate(r: Row): ProtocolAggregate {
  return {
    protocolName: r.protocol_name,
    bucket: r.b === undefined ? undefined : Number(r.b),
    txCount: Number(r.tx_count),
    successCount: Number(r.success_count),
    feeSum: Number(r.fee_sum),
    feeMin: Number(r.fee_min ?? 0),
    feeMax: Number(r.fee_max ?? 0),
    cuSum: Number(r.cu_sum),
    accountsSum: Number(r.accounts_sum),
    firstSeen: Number(r.first_seen),
    lastSeen: Number(r.last_seen),
    maxSlot: String(r.max_slot ?? '0'),
    instructionTypes: Number(r.instruction_types ?? 0),
    programs: Number(r.programs ?? 0),
    cuQuantiles: triple(r.cu_q),
    feeQuantiles: triple(r.fee_q),
  };
}

/** The protocol-stats figures computed by scanning the base table only: the reference for benchmarks. */
export async function aggregateProtocolsByScan(wh: Warehouse, protocol: string, range: TimeRange): Promise<Row | undefined> {
  const cond = intervalCondition('block_time', { from: range.gte, to: range.lte === undefined ? undefined : range.lte + 1 }, 'scan');
  const rows = await wh.query<Row>(
    `SELECT count() AS tx_count, countIf(success) AS success_count, sum(fee) AS fee_sum, sum(compute_units) AS cu_sum,
            sum(accounts_count) AS accounts_sum, toUInt32(min(block_time)) AS first_seen, toUInt32(max(block_time)) AS last_seen,
            uniqExact(instruction_type) AS instruction_types
     FROM ${TABLES.transactions} WHERE protocol_name = {p:String} AND ${cond.sql}`,
    { params: { p: protocol, ...cond.params } },
  );
  return rows[0];
}
