// The service's parts wired together once, for the entry point, CLIs and tests alike.
import type { Config } from '../core/config.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { IngestPipeline } from '../ingest/pipeline.ts';
import { DataVersion } from '../views/data-version.ts';
import { migrate } from '../views/migrate.ts';
import { openWarehouse } from '../views/open-warehouse.ts';
import { ProtocolRegistry } from '../views/protocol-registry.ts';
import type { Warehouse } from '../views/warehouse.ts';
import { Analytics } from './analytics/analytics.ts';

export interface Services {
  config: Config;
  logger: Logger;
  wh: Warehouse;
  dataVersion: DataVersion;
  registry: ProtocolRegistry;
  analytics: Analytics;
  pipeline: IngestPipeline;
  close(): Promise<void>;
}

export async function createServices(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<Services> {
  const wh = openWarehouse(config);
  await migrate(wh, (name) => logger.info({ migration: name }, 'applying migration'));
  const dataVersion = new DataVersion();
  const registry = new ProtocolRegistry(wh);
  const analytics = new Analytics(wh, registry, dataVersion);
  const pipeline = new IngestPipeline(wh, registry, dataVersion, logger, {
    maxRecordBytes: config.ingest.maxRecordBytes,
    batchRows: config.ingest.batchRows,
    writerId: config.ingest.writerId,
  });
  return { config, logger, wh, dataVersion, registry, analytics, pipeline, close: () => wh.close() };
}
