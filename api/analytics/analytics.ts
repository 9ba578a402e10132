// The shared analytics layer: every interface (JSON-RPC, REST, GraphQL) asks here and only
// maps the answer (client SQL has its own sandbox in api/services/sql/). It owns protocol visibility
// (inactive protocols are hidden; each request's protocols are resolved once, by
// protocol-scope.ts), the result cache, and all SQL for answers: aggregate answers are
// presets over the question model (presets.ts, group-pages.ts), compiled by the one
// compiler (question/compile.ts) into one statement that is costed and run as the same
// object (question-runner.ts); record listings are built by their own helpers. warehouse/
// owns the schema.
import type { DataVersion } from '../../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../../warehouse/protocol-registry.ts';
import type { Budget } from '../../core/budget.ts';
import { boundTo } from '../../warehouse/budgeted-warehouse.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { readBucketFigures, type BucketFigures, type BucketKey } from './presets/activity-buckets.ts';
import {
  checkAddressToken,
  countAddressTransactions,
  listAddressTransactions,
  type AddressFilters,
  type AddressListRequest,
} from './records/address-transactions.ts';
import type { AnswerCost } from './cost/analytics-cost.ts';
import { listFailedTransactions, type FailedTransaction } from './records/failed-transactions.ts';
import { toFeeStats, type FeeStats } from './presets/fee-stats.ts';
import { tableStorage, toGlobalStats, type GlobalStats } from './presets/global-stats.ts';
import type { PageTokens } from './paging/page-token.ts';
import { PREPARERS, type PrepareContext, type PrepareDeps, type PreparedOp, type PreparedOps } from './prepared-answers.ts';
import { PRESETS, toActivity, toInstructionTypes, toStats, toTop, type TopSortBy } from './presets/presets.ts';
import { toComparison, toPerformance, type ProtocolComparisonItem, type ProtocolPerformance } from './presets/protocol-reports.ts';
import { resolveProtocols, type ListingScope, type ProtocolAsk } from '../../core/protocol-scope.ts';
import { checkRequest, type CheckedRequest, type RequestDecl, type RequestInput } from '../../core/request-check.ts';
import type { TObject } from '@sinclair/typebox';
import type { AnswerRow, QuestionFilters } from './question/compile.ts';
import { MEASURES, type Measures } from './question/model.ts';
import type { ActivityGranularity, Granularity } from './question/granularity.ts';
import type { CostQuestion, Prepared } from './prepared.ts';
import { QuestionRunner, type Compiled } from './question-runner.ts';
import { QuestionMemo, ResultCache } from './result-cache.ts';
import { SharedReads } from './shared-reads.ts';
import { SignatureLookup } from './records/signature-lookup.ts';
import { tableColumns, type TableColumn } from './records/table-columns.ts';
import { metricsQuestions, toMetricsSeries, type MetricsAsk, type MetricsSeries } from './presets/protocol-metrics.ts';
import { listTransactions } from './records/transactions.ts';
import type {
  AddressTransaction,
  InstructionTypeStats,
  ListRequest,
  Page,
  ProtocolStats,
  TimeRange,
  TopProtocol,
  Transaction,
  ActivityBucket,
} from './types.ts';

export type { TopSortBy };
export type { CostQuestion, Prepared } from './prepared.ts';
export type { Checked, PrepareContext, PreparedOp, PreparedOps, ProtocolStatsWithPrograms } from './prepared-answers.ts';

/** The figures of the performance preset: what protocolPerformance is shaped from. */
export type ProtocolAggregate = AnswerRow['values'] & { cuQuantiles: [number, number, number] };

/** What every request's view of the layer shares: cached answers, coalesced reads, the registry's generation. */
interface Shared {
  readonly cache: ResultCache;
  /** Compiled questions: a cached answer compiles nothing. */
  readonly compiled: QuestionMemo<Compiled>;
  readonly signatures: SignatureLookup;
  readonly addressPages: SharedReads;
  /** Bumped by invalidate(): answers given before may show protocols no longer visible. */
  generation: number;
}

export class Analytics {
  private readonly shared: Shared;
  private readonly questions: QuestionRunner;
  /** What prepared answers are built from (prepared-answers.ts): this view's warehouse, tokens and runner. */
  private readonly deps: PrepareDeps;

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    private readonly dataVersion: DataVersion,
    /** The codec of pagination tokens every listing issues and reads (one key for all, from services.ts). */
    private readonly tokens: PageTokens,
    /** The question model's measures this service answers (the model's; a test may add some). */
    readonly measures: Measures = MEASURES,
    shared?: Shared,
  ) {
    this.shared = shared ?? {
      cache: new ResultCache(dataVersion),
      compiled: new QuestionMemo(),
      signatures: new SignatureLookup(),
      addressPages: new SharedReads(),
      generation: 0,
    };
    this.questions = new QuestionRunner(wh, this.shared.cache, this.shared.compiled, measures);
    this.deps = { wh, tokens, questions: this.questions };
  }

  /**
   * This layer for one request: every statement it causes runs under `budget` (its plan's
   * limits, its door's answer bytes; warehouse/budgeted-warehouse.ts), and with none
   * (null: an open route) every statement is refused. Doors ask through the view their
   * request's budget gives them; cached answers and coalesced reads stay shared.
   */
  under(budget: Budget | null | undefined): Analytics {
    return new Analytics(boundTo(this.wh, budget), this.registry, this.dataVersion, this.tokens, this.measures, this.shared);
  }

  /** Forget cached answers (the registry changed: a protocol was activated or hidden). */
  invalidate(): void {
    this.shared.generation += 1;
    this.shared.cache.clear();
  }

  /**
   * Changes whenever an answer given before may no longer be given (new data landed in this
   * process, or the registry changed): an interface that keeps whole answers of its own
   * keeps them for this version only, and for seconds at most (other processes' writes).
   */
  answersVersion(): string {
    return `${this.dataVersion.current}.${this.shared.generation}`;
  }

  // ---- protocols ----------------------------------------------------------------------------

  /** Names of the active protocols, which are the ones any answer may include. */
  async protocols(): Promise<string[]> {
    return this.registry.activeNames();
  }

  /**
   * The one check of a request, whichever door it came through: against the active protocols
   * (one registry read), by core/request-check.ts checkRequest (schema, rules, protocol scope,
   * days). Its answer then comes from the checked request alone (`prepare`, or a preset).
   */
  async check<S extends TObject>(request: RequestDecl<S>, input: RequestInput, nameOf?: (path: string) => string): Promise<CheckedRequest<S>> {
    return checkRequest(request, input, await this.registry.activeNames(), nameOf);
  }

  /**
   * The one entry of a prepared answer, keyed by its operation (prepared-answers.ts): the
   * checked request's statements built once, costed (`cost`) and run (`answer()`) as the
   * same objects; `context` is what the door's document selects and its plan's budget.
   */
  prepare<K extends PreparedOp>(op: K, checked: PreparedOps[K]['checked'], context: PrepareContext = {}): Promise<Prepared<PreparedOps[K]['answer']>> {
    return PREPARERS[op](this.deps, checked, context);
  }

  /** The protocols a request reads: one registry read, resolved by protocol-scope.ts. */
  private async scope(ask: ProtocolAsk): Promise<string[]> {
    return resolveProtocols(await this.registry.activeNames(), ask);
  }

  // ---- cost: questions are compiled once, costed and run as the same statement (question-runner.ts) ----

  /** The cost of answering, estimated by the engine before anything runs. */
  async cost(q: CostQuestion): Promise<AnswerCost> {
    return this.questions.cost(q);
  }

  // ---- presets: protocol-level answers -------------------------------------------------------

  private async filters(ask: ProtocolAsk, range: TimeRange): Promise<QuestionFilters> {
    const named = ask.kind === 'one' ? ask.name !== undefined : ask.kind === 'each' || ask.names !== undefined;
    return { protocols: await this.scope(ask), range, protocolsNamed: named };
  }

  async protocolStats(protocolName: string, range: TimeRange = {}): Promise<ProtocolStats> {
    const [row] = await this.questions.ask(PRESETS.stats(await this.filters({ kind: 'one', name: protocolName }, range)));
    return toStats(protocolName, row);
  }

  /** The performance figures of one protocol, with t-digest percentiles of compute units. */
  async protocolAggregate(protocolName: string, range: TimeRange = {}): Promise<ProtocolAggregate | undefined> {
    const [row] = await this.questions.ask(PRESETS.performance(await this.filters({ kind: 'one', name: protocolName }, range)));
    return row?.values as ProtocolAggregate | undefined;
  }

  /**
   * Performance of one protocol. Percentiles come from merged t-digest states, so they are
   * approximate (close to exact for the sizes here).
   */
  async protocolPerformance(protocolName: string, range: TimeRange): Promise<ProtocolPerformance> {
    const [row] = await this.questions.ask(PRESETS.performance(await this.filters({ kind: 'one', name: protocolName }, range)));
    return toPerformance(protocolName, row);
  }

  /** One item per requested protocol, in the order asked; each must be active. */
  async protocolComparison(protocols: readonly string[], range: TimeRange): Promise<ProtocolComparisonItem[]> {
    return toComparison(protocols, await this.questions.ask(PRESETS.comparison(await this.filters({ kind: 'each', names: protocols }, range))));
  }

  async topProtocols(range: TimeRange, sortBy: TopSortBy, limit: number): Promise<TopProtocol[]> {
    return toTop(await this.questions.ask(PRESETS.top(await this.filters({ kind: 'narrow', names: undefined }, range))), sortBy, limit);
  }

  /** Hourly or daily buckets over a closed range; buckets without records are included as zeros.
   *  Their count was checked by the request's declared rule (api/catalog/open-questions.ts bucketsAtMost). */
  async activity(protocolName: string | undefined, range: Required<TimeRange>, interval: Granularity): Promise<ActivityBucket[]> {
    if (range.lte < range.gte) return [];
    const rows = await this.questions.ask(PRESETS.activity(await this.filters({ kind: 'one', name: protocolName }, range), interval));
    return toActivity(rows, range, interval);
  }

  async instructionTypes(protocolName: string | undefined, range: TimeRange, limit: number): Promise<InstructionTypeStats[]> {
    return toInstructionTypes(await this.questions.ask(PRESETS.instructionTypes(await this.filters({ kind: 'one', name: protocolName }, range), limit)));
  }

  /** Records of the visible protocols (narrowed to `requested`) in a range. */
  async transactionCount(requested: readonly string[] | undefined, range: TimeRange): Promise<number> {
    const [row] = await this.questions.ask(PRESETS.count(await this.filters({ kind: 'narrow', names: requested }, range)));
    return (row?.values.count as number | undefined) ?? 0;
  }

  /** Fee statistics for one protocol or all visible ones, overall and per protocol. */
  async feeStats(protocolName: string | undefined, range: TimeRange): Promise<{ overall: FeeStats; protocols: FeeStats[] }> {
    const f = await this.filters({ kind: 'one', name: protocolName }, range);
    const [[all], per] = await Promise.all([this.questions.ask(PRESETS.fees(f)), this.questions.ask(PRESETS.feesPerProtocol(f))]);
    const byName = new Map(per.map((r) => [r.protocol, r]));
    return { overall: toFeeStats(protocolName ?? null, all), protocols: f.protocols.map((p) => toFeeStats(p, byName.get(p))) };
  }

  /** Whole-database figures: view totals over all time and storage from system.parts (no base-table scan). */
  async globalStats(): Promise<GlobalStats> {
    const f = await this.filters({ kind: 'narrow', names: undefined }, {});
    return toGlobalStats(f.protocols, await this.questions.ask(PRESETS.global(f)), await tableStorage(this.wh));
  }

  /**
   * Current figures of named activity buckets of the visible protocols, uncached: live
   * subscriptions ask once per committed write, right after it changed these very buckets.
   */
  async activityBuckets(keys: readonly BucketKey[], size: ActivityGranularity): Promise<BucketFigures[]> {
    return readBucketFigures(this.wh, new Set(await this.protocols()), keys, size);
  }

  /**
   * Prometheus figures of the visible protocols (all, or the asked ones, each active), per
   * instruction type when types are asked: all-time totals and the figures of each window.
   */
  async protocolMetrics(asked: readonly string[] | undefined, ask: Omit<MetricsAsk, 'protocols'>): Promise<MetricsSeries[]> {
    const full: MetricsAsk = { ...ask, protocols: await this.scope({ kind: 'list', names: asked }) };
    const q = metricsQuestions(full);
    const [totals, ...windows] = await Promise.all([this.questions.ask(q.totals), ...q.windows.map(([, w]) => this.questions.ask(w))]);
    return toMetricsSeries(
      full,
      totals!,
      q.windows.map(([label], i) => [label, windows[i]!]),
    );
  }

  /** The base table's columns (name and type), as client SQL reads them. */
  async transactionColumns(): Promise<TableColumn[]> {
    return this.shared.cache.get('columns:transactions', () => tableColumns(this.wh, TABLES.transactions));
  }

  // ---- records ---------------------------------------------------------------------------------

  async transaction(signature: string): Promise<Transaction | null> {
    return this.shared.signatures.find(this.wh, signature, new Set(await this.protocols()));
  }

  /** A page of records; `protocols`: how the filter's protocols are resolved (protocol-scope.ts). */
  async transactions(req: ListRequest, protocols: ListingScope = 'narrow'): Promise<Page<Transaction>> {
    return listTransactions(this.wh, this.tokens, req, await this.scope({ kind: protocols, names: req.filters.protocols }));
  }

  /** Failed records of the visible protocols, or of one protocol (which must be active). */
  async failedTransactions(opts: { protocolName?: string; programId?: string; range: TimeRange; limit: number }): Promise<FailedTransaction[]> {
    const protocols = await this.scope({ kind: 'one', name: opts.protocolName });
    return listFailedTransactions(this.wh, { protocols, programId: opts.programId, range: opts.range, limit: opts.limit });
  }

  /** One page of an address's records (its accounts or program id), of the visible protocols. */
  async addressTransactions(req: AddressListRequest, protocols: ListingScope = 'narrow'): Promise<Page<AddressTransaction>> {
    const visible = await this.scope({ kind: protocols, names: req.filters.protocols });
    // Concurrent requests for the same page share one read (shared-reads.ts); a page's
    // records are fresh objects per read, and callers only map them, never mutate.
    const key = JSON.stringify([this.answersVersion(), visible, req.address, req.filters, req.sortOrder, req.limit, req.cursor ?? null]);
    return this.shared.addressPages.run(key, () => listAddressTransactions(this.wh, this.tokens, req, visible));
  }

  /** How many of an address's records match, with no details. */
  async addressTransactionCount(address: string, filters: AddressFilters, protocols: ListingScope = 'narrow'): Promise<number> {
    return countAddressTransactions(this.wh, address, filters, await this.scope({ kind: protocols, names: filters.protocols }));
  }

  /** Refuse an address-listing token this service did not issue for `req`, without listing. */
  checkAddressToken(req: AddressListRequest & { cursor: string }): void {
    checkAddressToken(this.tokens, req);
  }
}
