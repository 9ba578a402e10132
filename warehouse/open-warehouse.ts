import type { Config } from '../core/config/load-config.ts';
import { EmbeddedWarehouse } from './embedded-warehouse.ts';
import { ServerWarehouse } from './server-warehouse.ts';
import type { Warehouse } from './warehouse.ts';

/** Embedded chDB unless CLICKHOUSE_URL names a server; embedded, over at most `sessions` serving sessions (SERVING_SESSIONS). */
export function openWarehouse(config: Pick<Config, 'clickhouse' | 'dataDir'>, sessions?: number): Warehouse {
  const { url, user, password, database, cluster } = config.clickhouse;
  if (url !== undefined) return new ServerWarehouse({ url, user, password, database, cluster });
  return new EmbeddedWarehouse(config.dataDir, { sessions });
}

/**
 * The engine sessions client SQL runs on, apart from the serving one. Embedded: one chDB
 * session each over the same data directory (a session runs one query at a time, and a
 * second session runs concurrently with the first, so a heavy client query never queues
 * serving queries). Server: the server runs queries concurrently anyway; the sessions share
 * one client, logged in as the dedicated read-only user when CLICKHOUSE_SQL_USER is set
 * (deploy/clickhouse/sql-sandbox-user.sql), so grants and a row policy back the guard.
 */
export function openSandboxSessions(config: Pick<Config, 'clickhouse' | 'dataDir' | 'sql'>): Warehouse[] {
  const n = config.sql.sessions;
  const { url, user, password, database, cluster } = config.clickhouse;
  // One session each: the sandbox spreads client queries over its sessions itself.
  if (url === undefined) return Array.from({ length: n }, () => new EmbeddedWarehouse(config.dataDir, { sessions: 1 }));
  const shared = new ServerWarehouse(
    config.sql.user === undefined
      ? { url, user, password, database, cluster }
      : { url, user: config.sql.user, password: config.sql.password, database, cluster },
  );
  let open = n;
  // Each slot closes "its" session; the shared client closes with the last one.
  const slot: Warehouse = {
    transport: 'server',
    cluster: shared.cluster,
    query: (sql, options) => shared.query(sql, options),
    queryText: (sql, format, options) => shared.queryText(sql, format, options),
    stream: (sql, format, options) => shared.stream(sql, format, options),
    insert: () => Promise.reject(new Error('the SQL sandbox never writes')),
    insertBytes: () => Promise.reject(new Error('the SQL sandbox never writes')),
    exec: () => Promise.reject(new Error('the SQL sandbox never writes')),
    close: async () => {
      open -= 1;
      if (open === 0) await shared.close();
    },
  };
  return Array.from({ length: n }, () => slot);
}

/**
 * Engine sessions export jobs run on (api/services/exports/), one per worker: like the SQL sandbox's,
 * apart from the serving session, so a long export statement never queues serving queries.
 */
export function openExportSessions(config: Pick<Config, 'clickhouse' | 'dataDir' | 'exports'>): Warehouse[] {
  // One session each: a worker runs its statements one after another.
  return Array.from({ length: config.exports.workers }, () => openWarehouse(config, 1));
}
