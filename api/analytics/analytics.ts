// The shared analytics layer: every interface (JSON-RPC, REST, GraphQL) asks here and only
// maps the answer (client SQL has its own sandbox in api/sql/). It owns protocol visibility (inactive protocols are hidden), the
// result cache, and all SQL for answers; warehouse/ owns the schema.
import { AppError, Errors, hint, param } from '../../core/errors.ts';
import { MAX_ACTIVITY_BUCKETS } from '../../core/limits.ts';
import type { DataVersion } from '../../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../../warehouse/protocol-registry.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import {
  checkAddressToken,
  countAddressTransactions,
  listAddressTransactions,
  type AddressFilters,
  type AddressListRequest,
} from './address-transactions.ts';
import { readActivityBuckets, type BucketFigures, type BucketKey, type BucketSize } from './activity-buckets.ts';
import { costOf, type AnswerCost, type CostShape } from './analytics-cost.ts';
import { listFailedTransactions, type FailedTransaction } from './failed-transactions.ts';
import type { Statement } from './filter-conditions.ts';
import {
  bucketCount,
  bucketStarts,
  failurePageStatement,
  groupPageStatement,
  pageFailures,
  pageGroups,
  seriesGroups,
  seriesStatement,
  type FailureRequest,
  type Group,
  type GroupFilters,
  type GroupPage,
  type GroupPageRequest,
  type GroupRequest,
  type TimeBucket,
} from './group-aggregates.ts';
import { toFeeStats, type FeeStats } from './fee-stats.ts';
import { tableStorage, toGlobalStats, type GlobalStats } from './global-stats.ts';
import { aggregateProtocols, aggregateStatement, type AggregateRequest, type Bucket, type ProtocolAggregate } from './protocol-aggregates.ts';
import { toComparison, toPerformance, type ProtocolComparisonItem, type ProtocolPerformance } from './protocol-reports.ts';
import { ResultCache } from './result-cache.ts';
import { edgesCondition, intervalCondition, planRange } from './time-range.ts';
import { SharedReads } from './shared-reads.ts';
import { SignatureLookup } from './signature-lookup.ts';
import { listingStatements, listTransactionEdges, listTransactions } from './transactions.ts';
import type {
  ActivityBucket,
  InstructionTypeStats,
  ListRequest,
  Page,
  ProtocolStats,
  TimeRange,
  TopProtocol,
  Transaction,
} from './types.ts';
import { TABLES } from '../../warehouse/tables.ts';

export type TopSortBy = 'transactions' | 'fees' | 'successRate';

/** Filters of grouped answers as asked: protocols undefined means every visible one. */
export type AskedGroupFilters = Omit<GroupFilters, 'protocols'> & { protocols?: readonly string[] };

/** Protocol statistics with the count of distinct program ids (GraphQL protocolStats). */
export type ProtocolStatsWithPrograms = ProtocolStats & { uniquePrograms: number };

/** One series of a time series: its keys (those grouped by) and one point per bucket. */
export interface Series {
  keys: Pick<Group, 'protocol' | 'instructionType'>;
  points: { time: number; values: Group['values'] }[];
}

/** A question whose cost can be estimated before it runs, one per kind of answer. */
export type CostQuestion =
  | { kind: 'listing'; request: ListRequest }
  | { kind: 'groups'; request: Omit<GroupPageRequest, 'filters'> & { filters: AskedGroupFilters } }
  | { kind: 'series'; request: SeriesRequest }
  | { kind: 'failures'; request: Omit<FailureRequest, 'filters'> & { filters: AskedGroupFilters & { errorPattern?: string } } }
  | { kind: 'stats'; protocols?: readonly string[]; range: TimeRange }
  /** An answer of fixed cost (a point read, a list of names, a cost estimate). */
  | { kind: 'fixed' };

/** A time series: over a closed range, in buckets of one size. */
export type SeriesRequest = Omit<GroupRequest, 'filters' | 'bucket'> & { filters: AskedGroupFilters & { range: Required<TimeRange> }; bucket: TimeBucket };

/** Most points of one time-series answer (buckets x series x metrics); each series has at
 *  most MAX_ACTIVITY_BUCKETS buckets, like every activity answer. */
export const MAX_SERIES_POINTS = 100_000;

const rate = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);
const avg = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

export class Analytics {
  private readonly cache: ResultCache;
  private readonly signatures: SignatureLookup;
  private readonly addressPages = new SharedReads();
  /** Bumped by invalidate(): answers given before may show protocols no longer visible. */
  private generation = 0;

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    private readonly dataVersion: DataVersion,
  ) {
    this.cache = new ResultCache(dataVersion);
    this.signatures = new SignatureLookup(wh);
  }

  /** Forget cached answers (the registry changed: a protocol was activated or hidden). */
  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
  }

  /**
   * Changes whenever an answer given before may no longer be given (new data landed in this
   * process, or the registry changed): an interface that keeps whole answers of its own
   * keeps them for this version only, and for seconds at most (other processes' writes).
   */
  answersVersion(): string {
    return `${this.dataVersion.current}.${this.generation}`;
  }

  /** Names of the active protocols, which are the ones any answer may include. */
  async protocols(): Promise<string[]> {
    return this.registry.activeNames();
  }

  /** Fail unless `name` is an active protocol: inactive ones are "available on request". */
  async requireProtocol(name: string, key: 'protocol' | 'protocols' = 'protocol', index?: number): Promise<string> {
    const active = await this.registry.activeNames();
    if (!active.includes(name)) {
      throw new AppError(Errors.invalidParams, `${param(key, index)}: unknown protocol "${name}" (${hint('protocols')})`, { field: key });
    }
    return name;
  }

  /** The visible protocols, narrowed to `requested` when given (unknown names just match nothing). */
  async visibleProtocols(requested?: readonly string[]): Promise<string[]> {
    const active = await this.registry.activeNames();
    return requested === undefined ? active : active.filter((p) => requested.includes(p));
  }

  private aggregate(key: string, req: Parameters<typeof aggregateProtocols>[1]): Promise<ProtocolAggregate[]> {
    return this.cache.get(`agg:${key}:${JSON.stringify(req)}`, () => aggregateProtocols(this.wh, req));
  }

  async protocolStats(protocolName: string, range: TimeRange = {}): Promise<ProtocolStats> {
    await this.requireProtocol(protocolName);
    const [a] = await this.aggregate('stats', { protocols: [protocolName], range, distinct: true });
    return toStats(protocolName, a);
  }

  /** Stats plus t-digest percentiles, for performance answers. */
  async protocolAggregate(protocolName: string, range: TimeRange = {}): Promise<ProtocolAggregate | undefined> {
    await this.requireProtocol(protocolName);
    const [a] = await this.aggregate('perf', { protocols: [protocolName], range, distinct: true, percentiles: true });
    return a;
  }

  async topProtocols(range: TimeRange, sortBy: TopSortBy, limit: number): Promise<TopProtocol[]> {
    const rows = await this.aggregate('top', { protocols: await this.protocols(), range });
    const items = rows.map((a) => ({
      protocolName: a.protocolName ?? '',
      transactionCount: a.txCount,
      successRate: rate(a.successCount, a.txCount),
      totalFees: a.feeSum,
    }));
    const key: Record<TopSortBy, (t: TopProtocol) => number> = {
      transactions: (t) => t.transactionCount,
      fees: (t) => t.totalFees,
      successRate: (t) => t.successRate,
    };
    return items
      .sort((x, y) => key[sortBy](y) - key[sortBy](x) || x.protocolName.localeCompare(y.protocolName))
      .slice(0, limit);
  }

  /** Hourly or daily buckets over a closed range; buckets without records are included as zeros. */
  async activity(protocolName: string | undefined, range: Required<TimeRange>, interval: Bucket): Promise<ActivityBucket[]> {
    const step = interval === 'day' ? 86_400 : 3_600;
    const first = Math.floor(range.gte / step) * step;
    const count = Math.floor(range.lte / step) - Math.floor(range.gte / step) + 1;
    if (range.lte < range.gte) return [];
    if (count > MAX_ACTIVITY_BUCKETS) {
      throw new AppError(Errors.invalidParams,
        `${param('range')}: the range spans ${count} ${interval} buckets; at most ${MAX_ACTIVITY_BUCKETS} are allowed (use a shorter range${interval === 'day' ? '' : ` or ${hint('coarserBucket')}`})`,
        { field: 'range' });
    }
    const protocols = protocolName === undefined ? await this.protocols() : [await this.requireProtocol(protocolName)];
    const rows = await this.aggregate('activity', { protocols, range, perProtocol: false, bucket: interval });
    const byBucket = new Map(rows.map((r) => [r.bucket, r]));
    const out: ActivityBucket[] = [];
    for (let i = 0; i < count; i++) {
      const ts = first + i * step;
      const r = byBucket.get(ts);
      const d = new Date(ts * 1000);
      const bucket: ActivityBucket = {
        timestamp: ts,
        date: d.toISOString().slice(0, 10),
        ...(interval === 'hour' ? { hour: d.getUTCHours() } : {}),
        count: r?.txCount ?? 0,
        successCount: r?.successCount ?? 0,
        failedCount: r ? r.txCount - r.successCount : 0,
        totalFees: r?.feeSum ?? 0,
        totalComputeUnits: r?.cuSum ?? 0,
      };
      out.push(bucket);
    }
    return out;
  }

  async instructionTypes(protocolName: string | undefined, range: TimeRange, limit: number): Promise<InstructionTypeStats[]> {
    const protocols = protocolName === undefined ? await this.protocols() : [await this.requireProtocol(protocolName)];
    return this.cache.get(`itypes:${JSON.stringify([protocols, range, limit])}`, () => this.instructionTypesUncached(protocols, range, limit));
  }

  private async instructionTypesUncached(protocols: string[], range: TimeRange, limit: number): Promise<InstructionTypeStats[]> {
    const plan = planRange(range);
    const params: Record<string, unknown> = { protocols, lim: limit };
    const branches: string[] = [];
    if (plan.view) {
      const c = intervalCondition('hour_start', plan.view, 'view');
      Object.assign(params, c.params);
      branches.push(`SELECT protocol_name, instruction_type, tx_count, success_count, fee_sum, cu_sum
        FROM ${TABLES.instructionHourly} WHERE protocol_name IN {protocols:Array(String)} AND ${c.sql}`);
    }
    if (plan.edges.length > 0) {
      const c = edgesCondition('block_time', plan.edges);
      Object.assign(params, c.params);
      // Named like the view's columns: when no whole hour is covered this branch is the only
      // one, and the outer query reads the columns by these names.
      branches.push(`SELECT protocol_name, instruction_type, count() AS tx_count, countIf(success) AS success_count,
        sum(fee) AS fee_sum, sum(compute_units) AS cu_sum
        FROM ${TABLES.transactions} WHERE protocol_name IN {protocols:Array(String)} AND (${c.sql})
        GROUP BY protocol_name, instruction_type`);
    }
    if (branches.length === 0 || protocols.length === 0) return [];
    const rows = await this.wh.query<{ protocol_name: string; instruction_type: string; c: string; s: string; f: string; cu: string }>(
      `SELECT protocol_name, instruction_type, sum(tx_count) AS c, sum(success_count) AS s, sum(fee_sum) AS f, sum(cu_sum) AS cu
       FROM (${branches.join('\nUNION ALL\n')})
       GROUP BY protocol_name, instruction_type
       ORDER BY c DESC, protocol_name, instruction_type
       LIMIT {lim:UInt32}`,
      { params },
    );
    return rows.map((r) => {
      const n = Number(r.c);
      return {
        instructionType: r.instruction_type,
        protocolName: r.protocol_name,
        count: n,
        successRate: rate(Number(r.s), n),
        averageComputeUnits: avg(Number(r.cu), n),
        averageFee: avg(Number(r.f), n),
      };
    });
  }

  async transaction(signature: string): Promise<Transaction | null> {
    return this.signatures.find(signature, new Set(await this.protocols()));
  }

  /**
   * One item per requested protocol, in the order asked. Each name must be an active
   * protocol; `field` names the list in the error (e.g. "options.protocols").
   */
  async protocolComparison(protocols: readonly string[], range: TimeRange): Promise<ProtocolComparisonItem[]> {
    for (const [i, name] of protocols.entries()) await this.requireProtocol(name, 'protocols', i);
    return toComparison(protocols, await this.aggregate('cmp', { protocols, range, distinct: true }));
  }

  /**
   * Performance of one protocol. Percentiles come from merged t-digest states, so they are
   * approximate (close to exact for the sizes here).
   */
  async protocolPerformance(protocolName: string, range: TimeRange): Promise<ProtocolPerformance> {
    return toPerformance(protocolName, await this.protocolAggregate(protocolName, range));
  }

  /** Failed records of the visible protocols, or of one protocol (which must be active). */
  async failedTransactions(opts: { protocolName?: string; programId?: string; range: TimeRange; limit: number }): Promise<FailedTransaction[]> {
    const protocols = opts.protocolName === undefined ? await this.protocols() : [await this.requireProtocol(opts.protocolName)];
    return listFailedTransactions(this.wh, { protocols, programId: opts.programId, range: opts.range, limit: opts.limit });
  }

  /** One page of an address's records (its accounts or program id), of the visible protocols. */
  async addressTransactions(req: AddressListRequest): Promise<Page<Transaction>> {
    const visible = await this.visibleProtocols(req.filters.protocols);
    // Concurrent requests for the same page share one read (shared-reads.ts); a page's
    // records are fresh objects per read, and callers only map them, never mutate.
    const key = JSON.stringify([this.answersVersion(), visible, req.address, req.filters, req.sortOrder, req.limit, req.cursor ?? null]);
    return this.addressPages.run(key, () => listAddressTransactions(this.wh, req, visible));
  }

  /** How many of an address's records match, with no details. */
  async addressTransactionCount(address: string, filters: AddressFilters): Promise<number> {
    return countAddressTransactions(this.wh, address, filters, await this.visibleProtocols(filters.protocols));
  }

  /** Refuse an address-listing token this service did not issue for `req`, without listing. */
  checkAddressToken(req: AddressListRequest & { cursor: string }): void {
    checkAddressToken(req);
  }

  async transactions(req: ListRequest): Promise<Page<Transaction>> {
    return listTransactions(this.wh, req, await this.visibleProtocols(req.filters.protocols));
  }

  // ---- REST additions: fee statistics, global statistics, counts ------------------------

  /** Records of the visible protocols (narrowed to `requested`) in a range, from the hourly view plus edges. */
  async transactionCount(requested: readonly string[] | undefined, range: TimeRange): Promise<number> {
    const protocols = await this.visibleProtocols(requested);
    const [a] = await this.aggregate('count', { protocols, range, perProtocol: false });
    return a?.txCount ?? 0;
  }

  /** Fee statistics for one protocol or all visible ones, overall and per protocol. */
  async feeStats(protocolName: string | undefined, range: TimeRange): Promise<{ overall: FeeStats; protocols: FeeStats[] }> {
    const protocols = protocolName === undefined ? await this.protocols() : [await this.requireProtocol(protocolName)];
    const [all] = await this.aggregate('fees', { protocols, range, perProtocol: false, percentiles: true, extremes: true });
    const per = await this.aggregate('fees-per', { protocols, range, percentiles: true, extremes: true });
    const byName = new Map(per.map((a) => [a.protocolName, a]));
    return {
      overall: toFeeStats(protocolName ?? null, all),
      protocols: protocols.map((p) => toFeeStats(p, byName.get(p))),
    };
  }

  // ---- GraphQL additions: several protocols at once, groups, series, costs --------------

  /**
   * The names of an asked protocol list, each of which must be active; the list must not be
   * empty. Duplicates are dropped, order kept.
   */
  async requireProtocols(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) {
      throw new AppError(Errors.invalidParams, `${param('protocols')} must name at least one protocol (${hint('protocols')}); leave it out for all of them`, { field: 'protocols' });
    }
    for (const [i, name] of names.entries()) await this.requireProtocol(name, 'protocols', i);
    return [...new Set(names)];
  }

  private async resolved<F extends AskedGroupFilters>(filters: F): Promise<F & { protocols: string[] }> {
    return { ...filters, protocols: filters.protocols === undefined ? await this.protocols() : await this.requireProtocols(filters.protocols) };
  }

  /** Statistics of each asked protocol (every visible one when none is asked), in that order. */
  async protocolStatsList(asked: readonly string[] | undefined, range: TimeRange): Promise<ProtocolStatsWithPrograms[]> {
    const protocols = asked === undefined ? await this.protocols() : await this.requireProtocols(asked);
    const rows = await this.aggregate('stats-list', this.statsRequest(protocols, range));
    const byName = new Map(rows.map((a) => [a.protocolName, a]));
    return protocols.map((p) => ({ ...toStats(p, byName.get(p)), uniquePrograms: byName.get(p)?.programs ?? 0 }));
  }

  private statsRequest(protocols: readonly string[], range: TimeRange): AggregateRequest {
    return { protocols, range, distinct: true, programs: true };
  }

  /** A page of records with a cursor per record (GraphQL edges). */
  async transactionEdges(req: ListRequest): Promise<{ edges: { node: Transaction; cursor: string }[]; more: boolean }> {
    return listTransactionEdges(this.wh, req, await this.visibleProtocols(req.filters.protocols));
  }

  /** A page of groups (by protocol, hour, instruction type) with the asked metrics. */
  async transactionGroups(req: Omit<GroupPageRequest, 'filters'> & { filters: AskedGroupFilters }): Promise<GroupPage> {
    const filters = await this.resolved(req.filters);
    return this.cache.get(`groups:${JSON.stringify({ ...req, filters })}`, () => pageGroups(this.wh, { ...req, filters }));
  }

  /** Failures grouped by error message (and the asked keys), most frequent first. */
  async failureGroups(req: Omit<FailureRequest, 'filters'> & { filters: AskedGroupFilters & { errorPattern?: string } }): Promise<GroupPage> {
    const filters = await this.resolved(req.filters);
    return this.cache.get(`failures:${JSON.stringify({ ...req, filters })}`, () => pageFailures(this.wh, { ...req, filters }));
  }

  /**
   * A time series over a closed range: one series per combination of the grouped keys (one
   * series without keys), each with every bucket of the range, empty ones as zeros.
   */
  async timeSeries(req: SeriesRequest): Promise<Series[]> {
    checkBuckets(req.filters.range, req.bucket);
    const filters = await this.resolved(req.filters);
    const groups = await this.cache.get(`series:${JSON.stringify({ ...req, filters })}`,
      () => seriesGroups(this.wh, { filters, keys: [...req.keys, 'hour'], metrics: req.metrics, bucket: req.bucket }));
    const starts = bucketStarts(req.filters.range, req.bucket);
    const bySeries = new Map<string, { keys: Series['keys']; byTime: Map<number, Group['values']> }>();
    if (req.keys.length === 0) bySeries.set('', { keys: {}, byTime: new Map() });
    for (const g of groups) {
      const keys: Series['keys'] = {};
      if (g.protocol !== undefined) keys.protocol = g.protocol;
      if (g.instructionType !== undefined) keys.instructionType = g.instructionType;
      const id = JSON.stringify(keys);
      let s = bySeries.get(req.keys.length === 0 ? '' : id);
      if (!s) bySeries.set(id, (s = { keys, byTime: new Map() }));
      s.byTime.set(g.time ?? 0, g.values);
    }
    const points = bySeries.size * starts.length * Math.max(1, req.metrics.length);
    if (points > MAX_SERIES_POINTS) {
      throw new AppError(Errors.invalidParams,
        `${param('range')}: the answer would hold ${points} points; at most ${MAX_SERIES_POINTS} are allowed (use a shorter range, a coarser bucket, fewer metrics or fewer groups)`, { field: 'range' });
    }
    const zero = Object.fromEntries(req.metrics.map((m) => [m, 0])) as Group['values'];
    return [...bySeries.values()].map((s) => ({ keys: s.keys, points: starts.map((time) => ({ time, values: s.byTime.get(time) ?? zero })) }));
  }

  /** The cost of answering a question, estimated by the engine before anything runs. */
  async cost(q: CostQuestion): Promise<AnswerCost> {
    const { statements, shape } = await this.costParts(q);
    return this.cache.get(`cost:${JSON.stringify(statements)}`, () => costOf(this.wh, statements, shape));
  }

  private async costParts(q: CostQuestion): Promise<{ statements: Statement[]; shape: CostShape }> {
    const some = (s: Statement | undefined): Statement[] => (s === undefined ? [] : [s]);
    switch (q.kind) {
      case 'listing': {
        const f = q.request.filters;
        const listing = await listingStatements(this.wh, q.request, await this.visibleProtocols(f.protocols));
        // The page window is found from the hourly view, which does not see instruction
        // types, program ids or status: with them the window may hold too few rows and the
        // listing reads the whole range next, so both statements are charged.
        const thinned = f.instructionTypes !== undefined || f.programIds !== undefined || f.status !== undefined;
        const statements = listing === undefined ? [] : listing.windowed === undefined ? [listing.full] : thinned ? [listing.windowed, listing.full] : [listing.windowed];
        return {
          statements,
          shape: { range: f.blockTime ?? {}, protocolsGiven: f.protocols !== undefined },
        };
      }
      case 'groups': {
        const filters = await this.resolved(q.request.filters);
        const r = q.request;
        return {
          statements: some(groupPageStatement({ ...r, filters })),
          shape: { range: r.filters.range, protocolsGiven: r.filters.protocols !== undefined, keys: r.keys, metrics: [...r.metrics, r.sort.metric], bucket: r.bucket },
        };
      }
      case 'series': {
        checkBuckets(q.request.filters.range, q.request.bucket);
        const filters = await this.resolved(q.request.filters);
        const r = q.request;
        return {
          statements: some(seriesStatement({ ...r, filters, keys: [...r.keys, 'hour'] })),
          shape: { range: r.filters.range, protocolsGiven: r.filters.protocols !== undefined, keys: r.keys, metrics: r.metrics, bucket: r.bucket },
        };
      }
      case 'failures': {
        const filters = await this.resolved(q.request.filters);
        const r = q.request;
        return {
          statements: some(failurePageStatement({ ...r, filters })),
          shape: { range: r.filters.range, protocolsGiven: r.filters.protocols !== undefined, keys: r.keys, metrics: r.metrics },
        };
      }
      case 'stats': {
        const protocols = q.protocols === undefined ? await this.protocols() : await this.requireProtocols(q.protocols);
        return { statements: some(aggregateStatement(this.statsRequest(protocols, q.range))), shape: { range: q.range, protocolsGiven: q.protocols !== undefined } };
      }
      case 'fixed':
        return { statements: [], shape: { range: { gte: 0, lte: 0 }, protocolsGiven: true } };
    }
  }

  /** Whole-database figures: view totals over all time and storage from system.parts (no base-table scan). */
  async globalStats(): Promise<GlobalStats> {
    const active = await this.protocols();
    const per = await this.aggregate('global', { protocols: active, range: {}, extremes: true });
    return toGlobalStats(active, per, await tableStorage(this.wh));
  }

  // ---- Live subscriptions ---------------------------------------------------------------

  /**
   * Current figures of named activity buckets of the visible protocols, uncached: live
   * subscriptions ask once per committed write, right after it changed these very buckets.
   */
  async activityBuckets(keys: readonly BucketKey[], size: BucketSize): Promise<BucketFigures[]> {
    return readActivityBuckets(this.wh, keys, size, await this.protocols());
  }
}

/** Refuse a series of more than MAX_ACTIVITY_BUCKETS buckets before anything runs. */
function checkBuckets(range: Required<TimeRange>, bucket: TimeBucket): void {
  const buckets = bucketCount(range, bucket);
  if (buckets > MAX_ACTIVITY_BUCKETS) {
    throw new AppError(Errors.invalidParams,
      `${param('range')}: the range spans ${buckets} ${bucket} buckets; at most ${MAX_ACTIVITY_BUCKETS} are allowed (use a shorter range or a coarser bucket)`, { field: 'range' });
  }
}

export function toStats(protocolName: string, a: ProtocolAggregate | undefined): ProtocolStats {
  const n = a?.txCount ?? 0;
  const ok = a?.successCount ?? 0;
  return {
    protocolName,
    totalTransactions: n,
    successfulTransactions: ok,
    failedTransactions: n - ok,
    successRate: rate(ok, n),
    totalFees: a?.feeSum ?? 0,
    averageFee: avg(a?.feeSum ?? 0, n),
    totalComputeUnits: a?.cuSum ?? 0,
    averageComputeUnits: avg(a?.cuSum ?? 0, n),
    averageAccountsCount: avg(a?.accountsSum ?? 0, n),
    uniqueInstructionTypes: a?.instructionTypes ?? 0,
    firstSeen: n === 0 ? 0 : (a?.firstSeen ?? 0),
    lastSeen: n === 0 ? 0 : (a?.lastSeen ?? 0),
  };
}
