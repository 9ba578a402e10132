import type { Config } from '../core/config.ts';
import { EmbeddedWarehouse } from './embedded-warehouse.ts';
import { ServerWarehouse } from './server-warehouse.ts';
import type { Warehouse } from './warehouse.ts';

/** Embedded chDB unless CLICKHOUSE_URL names a server. */
export function openWarehouse(config: Pick<Config, 'clickhouse' | 'dataDir'>): Warehouse {
  const { url, user, password, database } = config.clickhouse;
  if (url !== undefined) return new ServerWarehouse({ url, user, password, database });
  return new EmbeddedWarehouse(config.dataDir);
}
