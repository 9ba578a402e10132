// The service's parts wired together once, for the entry point, CLIs and tests alike.
import type { Config } from '../../core/config/load-config.ts';
import { createLogger, type Logger } from '../../core/logger.ts';
import { KafkaSource, type KafkaSourceHooks } from '../../ingest/kafka-source.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import { DataVersion } from '../../warehouse/data-version.ts';
import { readFreshness } from '../../warehouse/ingest-freshness.ts';
import { journalClock, readFinishedBatches } from '../../warehouse/journal-reader.ts';
import { InstrumentedWarehouse } from '../../warehouse/instrumented-warehouse.ts';
import { checkIntegrity } from '../../warehouse/integrity.ts';
import { migrate } from '../../warehouse/migrate.ts';
import { AccountStore } from '../../warehouse/account-store.ts';
import { openExportSessions, openSandboxSessions, openWarehouse } from '../../warehouse/open-warehouse.ts';
import { ProtocolRegistry } from '../../warehouse/protocol-registry.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { BudgetedWarehouse, operatorBudget } from '../../warehouse/budgeted-warehouse.ts';
import { PlanLanes } from '../../warehouse/plan-lanes.ts';
import { createAccess, type Access } from '../services/access/access.ts';
import { Metrics } from '../../core/metrics.ts';
import { Analytics } from '../analytics/analytics.ts';
import { AnalyticsWarehouse } from '../analytics/analytics-warehouse.ts';
import { PageTokens } from '../analytics/paging/page-token.ts';
import { SqlSandbox } from '../services/sql/sql-sandbox.ts';
import { DownloadLinks } from '../services/exports/download-links.ts';
import { ExportService } from '../services/exports/export-service.ts';
import { ExecutionService } from '../services/exports/executions.ts';
import { JobStore } from '../services/exports/job-store.ts';
import { FreshnessWatermark } from '../services/freshness.ts';
import type { Measures } from '../analytics/question/model.ts';
import { LiveActivity } from '../doors/graphql/subscriptions/live-activity.ts';
import { createX402Door } from '../services/x402/x402-door.ts';
import type { SvmChain } from '../services/x402/x402-server.ts';
import { X402PaymentStore } from '../../warehouse/x402-payment-store.ts';
import { METRICS_FRESHNESS_REUSE_MS } from '../../core/limits/access.ts';

export interface Services {
  config: Config;
  logger: Logger;
  wh: Warehouse;
  dataVersion: DataVersion;
  registry: ProtocolRegistry;
  /** The codec of every listing's pagination tokens, keyed by the operator token (replicas share it). */
  pageTokens: PageTokens;
  /** The analytics layer as the doors get it: each binds its request's budget (unbound, it refuses every statement). */
  analytics: Analytics;
  /** The same layer under the operator's budget: background work, CLIs, benchmarks and tests outside any request. */
  operatorAnalytics: Analytics;
  /** Client SQL, on engine sessions of its own. */
  sqlSandbox: SqlSandbox;
  pipeline: IngestPipeline;
  metrics: Metrics;
  access: Access;
  /** Dataset export jobs, on engine sessions of their own. */
  exports: ExportService;
  /** SQL executions: SQL export jobs read back page by page (api/services/exports/executions.ts). */
  executions: ExecutionService;
  /** Dashboard accounts and their sessions. */
  accounts: AccountStore;
  /** Newest block_time and ingest time per protocol, in memory (every answer's freshness). */
  freshness: FreshnessWatermark;
  /** Changed activity buckets, read once per write, for live GraphQL subscriptions. */
  live: LiveActivity;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Clock of rate-limit windows (tests move it instead of waiting). */
  now?: () => number;
  /** Clock of export jobs (retention, link expiry); tests move it instead of waiting. */
  exportClock?: () => number;
  /** The question model's measures to answer (the model's; a test adds one to see it on every door). */
  measures?: Measures;
  /** The chain an in-process x402 facilitator settles on (tests: LiteSVM; default X402_SOLANA_RPC_URL). */
  x402Chain?: SvmChain;
}

export async function createServices(config: Config, logger: Logger = createLogger(config.logLevel), options: ServiceOptions = {}): Promise<Services> {
  const metrics = new Metrics();
  const store = await openStore(config, metrics, logger);
  const { wh, servingWh } = store;
  const dataVersion = new DataVersion();
  const registry = new ProtocolRegistry(wh);
  // Pagination tokens carry a MAC; replicas share the operator token, so they share the key.
  const pageTokens = new PageTokens(config.adminToken);
  const analyticsOver = (over: Warehouse): Analytics => new Analytics(over, registry, dataVersion, pageTokens, options.measures);
  const analytics = analyticsOver(new AnalyticsWarehouse(servingWh, config.analyticsTimeoutSeconds));
  const sqlSandbox = new SqlSandbox(
    openSandboxSessions(config).map((session) => new BudgetedWarehouse(new InstrumentedWarehouse(session, metrics), 'sql')),
    { ...config.sql, readonlyByUser: config.sql.user !== undefined },
    () => analytics.protocols(),
  );
  // Live streams' reads serve every subscriber at once: background work, under the operator's budget.
  const operatorAnalytics = analytics.under(operatorBudget());
  const writes = await startWrites(config, logger, metrics, { wh, registry, dataVersion, operatorAnalytics });
  const access = await createAccess({ config, wh, logger, metrics, now: options.now });
  // Keyless calls paid per call (docs/x402.md): the facilitator is reached now, so a bad one fails the start.
  if (config.x402.enabled) {
    access.x402 = await createX402Door({
      config: config.x402,
      sandbox: sqlSandbox,
      payments: new X402PaymentStore(wh),
      logger,
      chain: options.x402Chain,
      now: options.now,
      // Catalog calls are priced by a dry run of the same layer (api/analytics/cost/dry-run.ts).
      wh: servingWh,
      analyticsOver,
    });
  }
  const accounts = new AccountStore(wh, access.now);
  const jobs = startJobs(config, logger, metrics, { access, sqlSandbox, servingWh, pageTokens, analytics }, options.exportClock);
  return {
    config,
    logger,
    wh,
    dataVersion,
    registry,
    pageTokens,
    analytics,
    operatorAnalytics,
    sqlSandbox,
    metrics,
    access,
    accounts,
    ...writes,
    exports: jobs.exports,
    executions: jobs.executions,
    async close() {
      writes.freshness.stop();
      writes.live.stop();
      await jobs.close();
      // Settled payments' records, then usage, are written while the warehouse is still open.
      await access.x402?.recorded();
      await access.close();
      await sqlSandbox.close();
      await writes.pipeline.close();
      await store.close();
    },
  };
}

/**
 * The store, migrated and checked, and the sessions the serving statements run on. Every
 * statement a door can cause passes the request budget (warehouse/budgeted-warehouse.ts).
 * Free keys' analytics statements run on a serving session of their own: however heavy
 * (10,000-record listings), they never queue a paid key's read or /health behind them.
 */
async function openStore(config: Config, metrics: Metrics, logger: Logger) {
  // Every warehouse call, from any part, is timed for txa_warehouse_query_duration_seconds.
  const wh = new InstrumentedWarehouse(openWarehouse(config), metrics);
  await migrate(wh, (name) => logger.info({ migration: name }, 'applying migration'));
  // Start anyway, and say which rows are not trusted and what is done with them.
  for (const p of await checkIntegrity(wh)) logger.warn(p, `untrusted row in ${p.table}: ${p.problem}; ${p.effect}`);
  metrics.addFreshness(cachedFreshness(wh));
  const freeServing = new InstrumentedWarehouse(openWarehouse(config), metrics);
  const servingWh = new BudgetedWarehouse(wh, 'analytics', true, new PlanLanes(), { free: freeServing });
  return {
    wh,
    servingWh,
    async close() {
      await freeServing.close();
      await wh.close();
    },
  };
}

/** The write path and what watches it: the ingest pipeline, the freshness watermark, live streams. */
async function startWrites(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  parts: { wh: Warehouse; registry: ProtocolRegistry; dataVersion: DataVersion; operatorAnalytics: Analytics },
): Promise<Pick<Services, 'pipeline' | 'freshness' | 'live'>> {
  const { wh } = parts;
  const pipeline = new IngestPipeline(wh, parts.registry, parts.dataVersion, logger, {
    maxRecordBytes: config.ingest.maxRecordBytes,
    batchRows: config.ingest.batchRows,
    parseWorkers: config.ingest.parseWorkers,
    checks: config.ingest.checks,
    engineMinRecords: config.ingest.engineMinRecords,
    observer: metrics,
    writerId: config.ingest.writerId,
  });
  // The watermark first: an event sent for a write then already carries that write's freshness.
  const freshness = new FreshnessWatermark(wh, logger, config.freshnessRefreshMs);
  pipeline.observeChanges(freshness);
  await freshness.start();
  // Events are kept for the replay window, for clients that reconnect with Last-Event-ID.
  const live = new LiveActivity(parts.operatorAnalytics, logger, { windowSeconds: config.streamReplayWindowSeconds });
  pipeline.observeChanges(live);
  // Writes of other processes (npm run ingest, other replicas) reach streams through the journal.
  live.tailJournal({ clock: () => journalClock(wh), finishedSince: (since) => readFinishedBatches(wh, since) }, config.freshnessRefreshMs);
  return { pipeline, freshness, live };
}

/** Export jobs and SQL executions, on engine sessions of their own. */
function startJobs(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  parts: { access: Access; sqlSandbox: SqlSandbox; servingWh: Warehouse; pageTokens: PageTokens; analytics: Analytics },
  clock: (() => number) | undefined,
) {
  const { access, pageTokens } = parts;
  const exportSessions = openExportSessions(config).map((session) => new InstrumentedWarehouse(session, metrics));
  const jobStore = new JobStore(config.exports.dir);
  const exports = new ExportService({
    config: config.exports,
    store: jobStore,
    // Export statements write files: their reads are budgeted, their output is bounded by the job's quotas instead.
    sessions: exportSessions.map((session) => new BudgetedWarehouse(session, 'export', false)),
    sandbox: parts.sqlSandbox,
    visibleProtocols: () => parts.analytics.protocols(),
    // A key of a disabled account is refused everywhere else (access control): its links too.
    keyStatus: async (id) => {
      const key = await access.keys.get(id);
      return key?.accountDisabled === true ? 'inactive' : key?.status;
    },
    links: new DownloadLinks(config.adminToken),
    tokens: pageTokens,
    logger,
    now: clock,
  });
  exports.start();
  // Pages are read on the serving session, under each request's budget and its plan's share.
  const executions = new ExecutionService(exports, jobStore, parts.servingWh, pageTokens, clock);
  return {
    exports,
    executions,
    async close() {
      // A job's chunk in progress ends first; the job resumes at the next start.
      executions.close();
      await exports.close();
      await Promise.all(exportSessions.map((s) => s.close()));
    },
  };
}

/**
 * The Kafka source inside this process (KAFKA_BROKERS set; embedded mode allows only one
 * process per data directory): the services' own pipeline, and its measurements on the
 * services' registry, so /metrics shows them. undefined without brokers.
 */
export function inProcessKafka(services: Services, hooks: KafkaSourceHooks = {}): KafkaSource | undefined {
  const { config } = services;
  const brokers = config.kafka.brokers;
  if (brokers === undefined) return undefined;
  return new KafkaSource(services.pipeline, services.logger, { ...config.kafka, brokers }, hooks, services.metrics.kafka);
}

/** Freshness for scrapes, read at most every 5 s however often Prometheus scrapes. */
function cachedFreshness(wh: Warehouse): () => ReturnType<typeof readFreshness> {
  let cached: { at: number; value: ReturnType<typeof readFreshness> } | undefined;
  return () => {
    if (cached && Date.now() - cached.at < METRICS_FRESHNESS_REUSE_MS) return cached.value;
    const value = readFreshness(wh);
    cached = { at: Date.now(), value };
    value.catch(() => (cached = undefined));
    return value;
  };
}
