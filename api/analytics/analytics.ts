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
import { listFailedTransactions, type FailedTransaction } from './failed-transactions.ts';
import { toFeeStats, type FeeStats } from './fee-stats.ts';
import { tableStorage, toGlobalStats, type GlobalStats } from './global-stats.ts';
import { aggregateProtocols, type Bucket, type ProtocolAggregate } from './protocol-aggregates.ts';
import { toComparison, toPerformance, type ProtocolComparisonItem, type ProtocolPerformance } from './protocol-reports.ts';
import { ResultCache } from './result-cache.ts';
import { edgesCondition, intervalCondition, planRange } from './time-range.ts';
import { SignatureLookup } from './signature-lookup.ts';
import { listTransactions } from './transactions.ts';
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

const rate = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);
const avg = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

export class Analytics {
  private readonly cache: ResultCache;
  private readonly signatures: SignatureLookup;

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    dataVersion: DataVersion,
  ) {
    this.cache = new ResultCache(dataVersion);
    this.signatures = new SignatureLookup(wh);
  }

  /** Forget cached answers (the registry changed: a protocol was activated or hidden). */
  invalidate(): void {
    this.cache.clear();
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
    return listAddressTransactions(this.wh, req, await this.visibleProtocols(req.filters.protocols));
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

  /** Whole-database figures: view totals over all time and storage from system.parts (no base-table scan). */
  async globalStats(): Promise<GlobalStats> {
    const active = await this.protocols();
    const per = await this.aggregate('global', { protocols: active, range: {}, extremes: true });
    return toGlobalStats(active, per, await tableStorage(this.wh));
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
