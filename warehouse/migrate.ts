// Forward-only migration runner, safe to run at every start: applied migrations are
// recorded with a checksum; an applied file that changed is an error, never re-run.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderForCluster } from './cluster-layout.ts';
import { awaitEarlierInserts, createsView } from './earlier-inserts.ts';
import { withMigrationLock } from './migration-lock.ts';
import type { ClusterTarget, Warehouse } from './warehouse.ts';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  statements: string[];
}

/** Split a migration file into statements: a statement ends with `;` at the end of a line. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((file) => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    return {
      version: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text),
    };
  });
}

/**
 * The statements a migration runs: on one node exactly the file's statements (nothing
 * changes for existing installs); in cluster mode each rendered for the cluster
 * (ON CLUSTER, Replicated* engines, Distributed tables: warehouse/cluster-layout.ts). The
 * checksum stays the file's, in both modes.
 */
export function renderMigration(m: Migration, cluster: ClusterTarget | undefined): string[] {
  if (cluster === undefined) return m.statements;
  return m.statements.flatMap((s) => renderForCluster(s, cluster));
}

export const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations
    (version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))
    ENGINE = MergeTree ORDER BY version`;

/**
 * Before the first ON CLUSTER statement: the server knows the cluster and has the macros
 * the replicated tables' Keeper paths use, so a misconfigured node fails here, in words,
 * rather than half-way through a migration.
 */
export async function checkClusterReady(wh: Warehouse, cluster: ClusterTarget): Promise<void> {
  const [hosts] = await wh.query<{ n: string }>('SELECT count() AS n FROM system.clusters WHERE cluster = {c:String}', { params: { c: cluster.name } });
  if (Number(hosts?.n ?? 0) === 0) {
    throw new Error(`CLICKHOUSE_CLUSTER=${cluster.name}: the server has no such cluster in remote_servers (SELECT cluster FROM system.clusters)`);
  }
  const macros = await wh.query<{ macro: string }>("SELECT macro FROM system.macros WHERE macro IN ('shard', 'replica')");
  const have = new Set(macros.map((r) => r.macro));
  const missing = ['shard', 'replica'].filter((x) => !have.has(x));
  if (missing.length > 0)
    throw new Error(`CLICKHOUSE_CLUSTER=${cluster.name}: the server has no ${missing.map((x) => `{${x}}`).join(' or ')} macro (<macros> in its config)`);
  const [mode] = await wh.query<{ v: string }>("SELECT getSetting('distributed_product_mode') AS v");
  if (mode?.v !== 'global') {
    throw new Error(
      `CLICKHOUSE_CLUSTER=${cluster.name}: distributed_product_mode is "${mode?.v}", must be "global" (the server warehouse sends it; a proxy or profile overrides it)`,
    );
  }
}

export interface MigrateResult {
  applied: string[];
  current: number;
}

export async function migrate(wh: Warehouse, onApply: (name: string) => void = () => {}, migrations: Migration[] = loadMigrations()): Promise<MigrateResult> {
  const cluster = wh.cluster;
  if (cluster !== undefined) await checkClusterReady(wh, cluster);
  for (const ddl of cluster === undefined ? [SCHEMA_MIGRATIONS_DDL] : renderForCluster(SCHEMA_MIGRATIONS_DDL, cluster)) await wh.exec(ddl);
  // Pending ones are applied under the server's migration lock, then looked at again: a
  // runner that waited finds them applied by the one it waited for (migration-lock.ts).
  const applied: string[] = [];
  const apply = async (): Promise<void> => {
    for (const m of await pendingOf(wh, migrations)) {
      onApply(m.name);
      for (const statement of renderMigration(m, cluster)) {
        await wh.exec(await withDatabase(wh, statement, cluster));
        if (createsView(statement)) await awaitEarlierInserts(wh);
      }
      await wh.insert('schema_migrations', [{ version: m.version, name: m.name, checksum: m.checksum }], {
        columns: ['version', 'name', 'checksum'],
      });
      applied.push(m.name);
    }
  };
  if ((await pendingOf(wh, migrations)).length > 0) await (cluster === undefined ? withMigrationLock(wh, apply) : apply());
  return { applied, current: migrations.at(-1)?.version ?? 0 };
}

/**
 * `{current_database}` in a statement becomes the session's database: a mutation runs
 * outside any session, so a table it reads by name (110's joinGet) must be qualified. A
 * cluster's database is the one its Distributed tables name (every node runs the statement).
 */
async function withDatabase(wh: Warehouse, statement: string, cluster: ClusterTarget | undefined): Promise<string> {
  if (!statement.includes('{current_database}')) return statement;
  const [row] = cluster !== undefined ? [{ db: cluster.database }] : await wh.query<{ db: string }>('SELECT currentDatabase() AS db');
  if (!/^[A-Za-z0-9_]+$/.test(row!.db)) throw new Error(`database name ${JSON.stringify(row!.db)} cannot be written into a statement`);
  return statement.replaceAll('{current_database}', row!.db);
}

/** The migrations not applied yet, in order; an applied one whose file changed is an error. */
async function pendingOf(wh: Warehouse, migrations: Migration[]): Promise<Migration[]> {
  const done = new Map<number, string>();
  for (const row of await wh.query<{ version: number; checksum: string }>(
    'SELECT version, any(checksum) AS checksum FROM schema_migrations GROUP BY version',
  )) {
    done.set(Number(row.version), row.checksum);
  }
  return migrations.filter((m) => {
    const prior = done.get(m.version);
    if (prior !== undefined && prior !== m.checksum) {
      throw new Error(`migration ${m.name} was changed after it was applied; add a new migration instead`);
    }
    return prior === undefined;
  });
}

/** Latest migration version the code knows, and the one the warehouse has applied. */
export async function migrationStatus(wh: Warehouse): Promise<{ expected: number; applied: number }> {
  const expected = loadMigrations().at(-1)?.version ?? 0;
  const rows = await wh.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations');
  return { expected, applied: Number(rows[0]?.v ?? 0) };
}
