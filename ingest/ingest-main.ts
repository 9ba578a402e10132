// `npm run ingest`: the Kafka source as its own process, for server mode (CLICKHOUSE_URL
// set), where API and ingest scale separately. In embedded mode it works too, but chDB
// binds one process to a DATA_DIR, so it must not share one with a running API.
// It builds only what ingest needs (warehouse, registry, pipeline), not the API.
import { loadConfigOrExit } from '../core/config/load-config.ts';
import { INGEST_REPORT_EVERY_MS } from '../core/limits/ingest.ts';
import { createServiceLogger } from '../core/logger.ts';
import { Metrics } from '../core/metrics.ts';
import { installProcessGuard } from '../core/process-guard.ts';
import { DataVersion } from '../warehouse/data-version.ts';
import { InstrumentedWarehouse } from '../warehouse/instrumented-warehouse.ts';
import { migrate } from '../warehouse/migrate.ts';
import { openWarehouse } from '../warehouse/open-warehouse.ts';
import { ProtocolRegistry } from '../warehouse/protocol-registry.ts';
import { backfillSource, KafkaSource } from './kafka-source.ts';
import { startMetricsServer } from './metrics-server.ts';
import { IngestPipeline } from './pipeline.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const brokers = config.kafka.brokers;
  if (brokers === undefined) {
    process.stderr.write('Invalid configuration:\n  - KAFKA_BROKERS must be set for npm run ingest (e.g. 127.0.0.1:9092)\n');
    process.exit(2);
  }
  const logger = createServiceLogger(config.logLevel, config.logFormat);
  // Before the engine opens: a fatal error from here on ends the process (docs/reliability.md).
  const guard = installProcessGuard({ stallExitMs: config.stallExitMs });
  // The same measurements as the API process: warehouse calls, pipeline outcomes, Kafka.
  const metrics = new Metrics();
  const wh = new InstrumentedWarehouse(openWarehouse(config), metrics);
  await migrate(wh, (name) => logger.info({ migration: name }, 'applying migration'));
  const pipeline = new IngestPipeline(wh, new ProtocolRegistry(wh), new DataVersion(), logger, {
    maxRecordBytes: config.ingest.maxRecordBytes,
    batchRows: config.ingest.batchRows,
    parseWorkers: config.ingest.parseWorkers,
    checks: config.ingest.checks,
    engineMinRecords: config.ingest.engineMinRecords,
    writerId: config.ingest.writerId,
    observer: metrics,
  });
  const source = new KafkaSource(
    pipeline,
    logger,
    { ...config.kafka, brokers },
    {
      // A consumer that will not restart by itself: exit, so the supervisor restarts the process
      // (uncommitted batches are re-delivered, and the journal repairs a half-done insert).
      onFatal: (err) => guard.exitNow('kafka consumer stopped for good', err),
    },
    metrics.kafka,
  );
  // A topic replayed beside the live one (KAFKA_BACKFILL_TOPIC), in the backfill lane.
  const backfill = backfillSource(
    pipeline,
    logger,
    { ...config.kafka, brokers },
    {
      onFatal: (err) => guard.exitNow('kafka backfill consumer stopped for good', err),
    },
    metrics.kafka,
  );
  const metricsServer = config.ingest.metricsPort === 0 ? undefined : await startMetricsServer(metrics.registry, config.ingest.metricsPort, config.host);
  if (metricsServer) logger.info({ url: `http://${config.host}:${config.ingest.metricsPort}/metrics` }, 'ingest metrics');

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing and committing the batches in flight');
    clearInterval(reporter);
    await source.stop();
    await backfill?.stop();
    metricsServer?.close();
    await wh.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  guard.watchEventLoop();

  let last = source.stats();
  const reporter = setInterval(() => {
    const now = source.stats();
    const perSecond = Math.round((now.stored + now.duplicates - (last.stored + last.duplicates)) / (INGEST_REPORT_EVERY_MS / 1000));
    logger.info({ ...now, recordsPerSecond: perSecond }, 'ingest progress');
    last = now;
  }, INGEST_REPORT_EVERY_MS);
  reporter.unref();

  // Repair a crashed predecessor's inserts while the consumer joins its group, not in the
  // first batch's time; a failure here is retried by that first batch.
  pipeline.prepare().catch((err: unknown) => logger.warn({ err }, 'ingest preparation failed; the first batch retries it'));
  await source.start();
  await backfill?.start();
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
