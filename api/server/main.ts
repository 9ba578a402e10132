// Entry point: validate config, migrate, seed demo data into an empty embedded store,
// then serve. Prints where to reach the service and the operator token.
import { loadConfigOrExit, type Config } from '../../core/config/load-config.ts';
import { createServiceLogger } from '../../core/logger.ts';
import { installProcessGuard } from '../../core/process-guard.ts';
import type { DemoTrickle } from '../../ingest/demo-trickle.ts';
import { progressPrinter, startDemo } from '../../ingest/seed.ts';
import { buildApp } from './app.ts';
import { createServices, inProcessKafka } from './services.ts';
import { backfillSource } from '../../ingest/kafka-source.ts';

// ---- the start-up banner: where to reach the service, and commands that work as printed
// (copied into another terminal, where ADMIN_TOKEN and TXA_URL are not set).

/** The keys CLI's default service URL (scripts/keys-cli.ts, core/config/load-config.ts loadClientConfig). */
const CLI_DEFAULT_URL = 'http://127.0.0.1:8080';

/** A value as one shell word (single-quoted unless it is plainly safe). */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command that creates a first API key against this process, as one line a shell runs. */
function createKeyCommand(address: string, adminToken: string): string {
  const env = [`ADMIN_TOKEN=${shellWord(adminToken)}`];
  if (address !== CLI_DEFAULT_URL) env.push(`TXA_URL=${shellWord(address)}`);
  return `${env.join(' ')} npm run keys -- create --plan free --name me`;
}

function startupBanner(config: Config, address: string, kafka: string | undefined): string {
  return (
    `\nSolana DeFi analytics service listening on ${address}\n` +
    `  health:      ${address}/health\n` +
    `  dashboard:   ${address}/dashboard (sign up, then create API keys)\n` +
    `  metrics:     ${address}/metrics (Authorization: Bearer <METRICS_TOKEN or admin token>)\n` +
    `  API key:     ${createKeyCommand(address, config.adminToken)}\n` +
    (kafka ? `  kafka:       ${kafka}\n` : '') +
    `  admin token: ${config.adminToken}${config.adminTokenGenerated ? '  (generated; set ADMIN_TOKEN to fix it)' : ''}\n\n`
  );
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createServiceLogger(config.logLevel, config.logFormat);
  // Before the engine opens: a fatal error from here on ends the process (docs/reliability.md).
  const guard = installProcessGuard({ stallExitMs: config.stallExitMs });
  const services = await createServices(config, logger);
  // Demo data lives in an embedded store: seeded when empty, then kept live by a trickle.
  let trickle: DemoTrickle | undefined;
  if (services.wh.transport === 'embedded') {
    const demo = await startDemo(services.wh, services.pipeline, logger, config, progressPrinter());
    if (demo.seeded > 0) logger.info({ rows: demo.seeded }, 'demo data seeded');
    trickle = demo.trickle;
  }
  const app = await buildApp(services);
  // With KAFKA_BROKERS set, the Kafka source runs in this process on the same pipeline
  // (embedded mode allows only one process per data directory).
  const kafka = inProcessKafka(services, {
    // The API keeps serving; ingest stops until a restart, and the log says so loudly.
    onFatal: (err) => logger.fatal({ err }, 'kafka consumer stopped for good; restart the service to resume ingest'),
  });
  // A topic replayed beside the live one (KAFKA_BACKFILL_TOPIC), in the pipeline's backfill lane.
  const brokers = config.kafka.brokers;
  const backfill =
    brokers === undefined
      ? undefined
      : backfillSource(
          services.pipeline,
          logger,
          { ...config.kafka, brokers },
          {
            onFatal: (err) => logger.fatal({ err }, 'kafka backfill consumer stopped for good; restart the service to resume it'),
          },
          services.metrics.kafka,
        );
  // Graceful shutdown: stop accepting connections, let in-flight requests finish
  // (app.close() waits for them), then flush buffered usage and close the engine
  // (services.close()). A stuck request cannot hold the process past SHUTDOWN_TIMEOUT_MS:
  // then it is killed, as process.exit() would wait for the engine's running statements; a
  // stuck event loop, which runs no timer, is ended by the guard's watchdog.
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const deadline = setTimeout(() => guard.exitNow(`shutdown timed out after ${config.shutdownTimeoutMs} ms (SHUTDOWN_TIMEOUT_MS)`), config.shutdownTimeoutMs);
    deadline.unref();
    try {
      // Stop consuming first: the batch in flight is stored and committed before the engine closes.
      await kafka?.stop();
      await backfill?.stop();
      await trickle?.stop();
      await app.close();
      await services.close();
      logger.info('shutdown complete');
      process.exit(0);
    } catch (err) {
      guard.exitNow('shutdown failed', err);
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  const address = await app.listen({ port: config.port, host: config.host });
  guard.watchEventLoop();
  await kafka?.start();
  await backfill?.start();
  const consuming = kafka ? `consuming ${config.kafka.topic} from ${config.kafka.brokers?.join(',')} as ${config.kafka.groupId}` : undefined;
  process.stdout.write(startupBanner(config, address, consuming));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
