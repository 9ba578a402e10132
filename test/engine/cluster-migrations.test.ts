// Cluster mode's migrations (warehouse/cluster-layout.ts, docs/cluster.md), checked without a
// cluster: no ClickHouse server or Keeper can run on these machines, so these tests render
// every statement, have the real engine's parser (chDB's formatQuery) read each one, compare
// the result with the reviewed snapshot, and drive the runner and view repair against a
// recording warehouse. That the statements *execute* on a 2x2 cluster is checked by the
// runbook (docs/cluster.md, "Verify a cluster after deploy"), not here.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_LAYOUT, localName, renderForCluster } from '../../warehouse/cluster-layout.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { MIGRATIONS_DIR, SCHEMA_MIGRATIONS_DDL, loadMigrations, migrate, renderMigration } from '../../warehouse/migrate.ts';
import { ServerWarehouse } from '../../warehouse/server-warehouse.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { rebuildViewBuckets } from '../../warehouse/view-repair.ts';
import type { ClusterTarget, InsertOptions, QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';

const CLUSTER: ClusterTarget = { name: 'txa', database: 'default' };
const rendered = (): { migration: string; sql: string }[] => [
  ...renderForCluster(SCHEMA_MIGRATIONS_DDL, CLUSTER).map((sql) => ({ migration: 'schema_migrations', sql })),
  ...loadMigrations().flatMap((m) => renderMigration(m, CLUSTER).map((sql) => ({ migration: m.name, sql }))),
];

let dir: string;
let wh: EmbeddedWarehouse;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'txa-cluster-'));
  wh = new EmbeddedWarehouse(path.join(dir, 'data'));
});
afterAll(async () => {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The engine's own parser: formatQuery fails with a syntax error exactly where the server's parser would. */
async function formatted(sql: string): Promise<string> {
  const [r] = await wh.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { params: { q: sql } });
  return r!.f;
}

describe('single node: nothing changes for existing installs', () => {
  it('runs exactly the statements of each file, and records the checksum of the file itself', () => {
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const migrations = loadMigrations();
    expect(migrations.map((m) => `${m.name}.sql`)).toEqual(files);
    for (const m of migrations) {
      const text = readFileSync(path.join(MIGRATIONS_DIR, `${m.name}.sql`), 'utf8');
      expect(m.checksum).toBe(createHash('sha256').update(text).digest('hex'));
      // The same array, not a copy: byte for byte what the runner executed before cluster mode.
      expect(renderMigration(m, undefined)).toBe(m.statements);
    }
  });
});

/** Plain views TABLES names (a definition on every node, no data): no table role. */
const VIEWS = new Set<string>([TABLES.ingestLineChecks]);

describe('cluster mode: every migration rendered', () => {
  it('gives every table the migrations create, and every table the code names, a cluster role', () => {
    const created = new Set<string>(['schema_migrations']);
    for (const m of loadMigrations())
      for (const s of m.statements) {
        const t = /CREATE TABLE IF NOT EXISTS (\w+)/.exec(s)?.[1];
        if (t) created.add(t);
      }
    expect([...created].sort()).toEqual(Object.keys(CLUSTER_LAYOUT).sort());
    for (const t of Object.values(TABLES)) if (!VIEWS.has(t)) expect(Object.keys(CLUSTER_LAYOUT), t).toContain(t);
  });

  it("parses every rendered statement with the engine's parser (formatQuery), each DDL ON CLUSTER", async () => {
    const all = rendered();
    expect(all.length).toBeGreaterThanOrEqual(40);
    for (const { migration, sql } of all) {
      const f = await formatted(sql).catch((err: Error) => {
        throw new Error(`${migration}: the engine's parser refuses a rendered statement: ${err.message}\n${sql}`);
      });
      if (/^(CREATE|DROP|ALTER)\b/m.test(sql.replace(/^--.*\n/gm, ''))) expect(f, `${migration}: ${sql}`).toContain('ON CLUSTER txa');
    }
  });

  it('creates sharded tables as Replicated local tables under a Distributed table of the same name, small ones on every node', () => {
    const sql = rendered().map((r) => r.sql.replace(/^--.*\n/gm, ''));
    for (const [table, role] of Object.entries(CLUSTER_LAYOUT)) {
      if (table === 'tx_by_signature') continue; // 002's layout, dropped by 021; checked with the others below
      if (role.kind === 'sharded') {
        const local = sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${localName(table)} ON CLUSTER txa`));
        expect(local, table).toMatch(
          new RegExp(`ENGINE = Replicated\\w*MergeTree\\('/clickhouse/tables/\\{shard\\}/\\{database\\}/${localName(table)}', '\\{replica\\}'`),
        );
        const dist = sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER txa`));
        expect(dist, table).toBe(
          `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER txa AS default.${localName(table)}\n` +
            `ENGINE = Distributed('txa', 'default', '${localName(table)}', ${role.shardingKey})`,
        );
      } else if (role.kind === 'node-local') {
        const s = sql.find((x) => x.startsWith(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER txa`));
        expect(s, table).toMatch(/ENGINE = Memory$/);
      } else if (role.kind === 'lookup') {
        // Its rows replicated to every node, read through a dictionary on each node.
        expect(
          sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table}_rows ON CLUSTER txa`)),
          table,
        ).toMatch(new RegExp(`ENGINE = ReplicatedMergeTree\\('/clickhouse/tables/all/\\{database\\}/${table}_rows', '\\{replica\\}'\\)`));
        expect(
          sql.find((s) => s.startsWith(`CREATE DICTIONARY IF NOT EXISTS ${table} ON CLUSTER txa`)),
          table,
        ).toMatch(new RegExp(`SOURCE\\(CLICKHOUSE\\(DB 'default' TABLE '${table}_rows'\\)\\)`));
        expect(
          sql.some((x) => x.startsWith(`CREATE TABLE IF NOT EXISTS ${table} `)),
          table,
        ).toBe(false);
      } else {
        const s = sql.find((x) => x.startsWith(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER txa`));
        expect(s, table).toMatch(new RegExp(`ENGINE = Replicated\\w*MergeTree\\('/clickhouse/tables/all/\\{database\\}/${table}', '\\{replica\\}'`));
        expect(
          sql.some((x) => x.includes(`${localName(table)} `)),
          table,
        ).toBe(false);
      }
    }
    // No table is created without a replicated engine or a Distributed one, but a writer's scratch tables.
    const scratch = Object.entries(CLUSTER_LAYOUT).flatMap(([t, r]) => (r.kind === 'node-local' ? [t] : []));
    for (const s of sql.filter((x) => x.startsWith('CREATE TABLE') && !scratch.some((t) => x.startsWith(`CREATE TABLE IF NOT EXISTS ${t} `))))
      expect(s).toMatch(/ENGINE = (Replicated\w*MergeTree\(|Distributed\()/);
  });

  it("runs the views on each shard's transactions_local, writing locally except the address tables (routed by address)", () => {
    const views = rendered()
      .map((r) => r.sql.replace(/^--.*\n/gm, ''))
      .filter((s) => s.startsWith('CREATE MATERIALIZED VIEW'));
    const targets = Object.fromEntries(views.map((v) => [/VIEW IF NOT EXISTS (\w+)/.exec(v)![1]!, /ON CLUSTER txa TO (\w+) AS/.exec(v)![1]!]));
    expect(targets).toEqual({
      tx_by_signature_mv: 'tx_by_signature_local',
      tx_by_address_mv: 'tx_by_address',
      protocol_hourly_mv: 'protocol_hourly_local',
      instruction_hourly_mv: 'instruction_hourly_local',
      failure_hourly_mv: 'failure_hourly_local',
      ingest_freshness_mv: 'ingest_freshness_local',
      tx_by_signature_v2_mv: 'tx_by_signature_v2_local',
      tx_by_address_listing_mv: 'tx_by_address_listing',
      tx_by_signature_v2_compact_mv: 'tx_by_signature_v2_compact_local',
      tx_by_signature_v3_mv: 'tx_by_signature_v3_local',
      tx_by_rid_mv: 'tx_by_rid_local',
      tx_rid_by_sig_mv: 'tx_rid_by_sig_local',
      tx_by_address_v2_mv: 'tx_by_address_v2',
      ingest_keys_mv: 'ingest_keys_local',
    });
    for (const v of views) {
      expect(v).toMatch(/\bFROM transactions_local\b/);
      expect(v).not.toMatch(/\bFROM transactions\b/);
    }
  });

  it("co-locates the by-signature lookup with its base rows: the view computes sig_key as the base table's sharding key", () => {
    const base = CLUSTER_LAYOUT.transactions!;
    const lookup = CLUSTER_LAYOUT.tx_by_signature_v2!;
    expect(base.kind === 'sharded' && base.shardingKey).toBe('cityHash64(signature)');
    expect(lookup.kind === 'sharded' && lookup.shardingKey).toBe('sig_key');
    const view = loadMigrations()
      .find((m) => m.version === 21)!
      .statements.find((s) => s.includes('CREATE MATERIALIZED VIEW'))!;
    expect(view).toContain('cityHash64(signature) AS sig_key');
  });

  it('matches the reviewed snapshot of the cluster DDL', async () => {
    const text = rendered()
      .map((r) => `-- [${r.migration}]\n${r.sql};\n`)
      .join('\n');
    await expect(text).toMatchFileSnapshot('../fixtures/cluster-ddl.sql');
  });

  it('refuses what it cannot render rather than creating a table on one node', () => {
    expect(() => renderForCluster('CREATE TABLE IF NOT EXISTS mystery (a UInt8) ENGINE = MergeTree ORDER BY a', CLUSTER)).toThrow(
      /no cluster role for table mystery/,
    );
    expect(() => renderForCluster('CREATE TABLE IF NOT EXISTS protocols (a UInt8) ENGINE = Memory', CLUSTER)).toThrow(/no replicated form/);
    // Only a lookup's rows are truncated, and only a lookup is read by a mutation.
    expect(() => renderForCluster('TRUNCATE TABLE transactions', CLUSTER)).toThrow(/only a lookup's rows/);
    expect(() =>
      renderForCluster("ALTER TABLE transactions UPDATE rid = joinGet('db.protocols', 'rid', slot) WHERE rid = 0 SETTINGS mutations_sync = 2", CLUSTER),
    ).toThrow(/updated from a lookup/);
    expect(() => renderForCluster('RENAME TABLE a TO b', CLUSTER)).toThrow(/not rendered for a cluster/);
    expect(() => renderForCluster('ALTER TABLE transactions MODIFY TTL block_time + INTERVAL 1 DAY', CLUSTER)).toThrow(/only column changes/);
    expect(() => renderForCluster('CREATE MATERIALIZED VIEW IF NOT EXISTS v TO protocols AS SELECT 1 FROM transactions', CLUSTER)).toThrow(/not sharded/);
    // A column change of a sharded table reaches the stored columns and the Distributed table.
    expect(renderForCluster('ALTER TABLE transactions ADD COLUMN IF NOT EXISTS x UInt8 DEFAULT 0', CLUSTER)).toEqual([
      'ALTER TABLE transactions_local ON CLUSTER txa ADD COLUMN IF NOT EXISTS x UInt8 DEFAULT 0',
      'ALTER TABLE transactions ON CLUSTER txa ADD COLUMN IF NOT EXISTS x UInt8 DEFAULT 0',
    ]);
  });
});

/** A warehouse that records statements and answers the catalogue queries the runner and repair make. */
class RecordingWarehouse implements Warehouse {
  readonly transport = 'server' as const;
  readonly execs: string[] = [];
  /** The parameters each exec bound, in the order of execs. */
  readonly execParams: (Record<string, unknown> | undefined)[] = [];
  readonly queries: string[] = [];
  constructor(
    readonly cluster: ClusterTarget | undefined,
    private readonly answer: (sql: string, options?: QueryOptions) => unknown[],
  ) {}
  async query<T>(sql: string, options?: QueryOptions): Promise<T[]> {
    this.queries.push(sql);
    return this.answer(sql, options) as T[];
  }
  queryText(): Promise<string> {
    return Promise.reject(new Error('not used'));
  }
  stream(): AsyncIterable<Uint8Array> {
    throw new Error('not used');
  }
  async insert(_table: string, _rows: readonly object[], _options?: InsertOptions): Promise<void> {}
  async insertBytes(_table: string, _data: Uint8Array, _format: string, _options?: InsertOptions): Promise<void> {}
  async exec(sql: string, options?: QueryOptions): Promise<void> {
    this.execs.push(sql);
    this.execParams.push(options?.params);
  }
  async close(): Promise<void> {}
}

const readyCluster = (sql: string): unknown[] => {
  if (sql.includes('system.clusters')) return [{ n: '4' }];
  if (sql.includes('system.macros')) return [{ macro: 'shard' }, { macro: 'replica' }];
  if (sql.includes('distributed_product_mode')) return [{ v: 'global' }];
  // After each new view the runner waits for inserts begun before it (none here).
  if (sql.includes('now64(6')) return [{ t: '2026-11-26 00:00:00.000000' }];
  if (sql.includes('system.processes')) return [{ n: '0', q: '' }];
  return [];
};

describe('the runner in cluster mode (recording warehouse, no server)', () => {
  it('checks the cluster first, then executes every rendered statement in order', async () => {
    const rec = new RecordingWarehouse(CLUSTER, readyCluster);
    const r = await migrate(rec);
    expect(r.applied).toEqual(loadMigrations().map((m) => m.name));
    // {current_database} (110's mutation reads its lookup by name) is the cluster's database.
    expect(rec.execs).toEqual(rendered().map((x) => x.sql.replaceAll('{current_database}', 'default')));
    // After every new view, a look at every node's running inserts.
    const views = rendered().filter((x) => /^CREATE MATERIALIZED VIEW\b/im.test(x.sql)).length;
    expect(views).toBeGreaterThan(0);
    const looks = rec.queries.filter((q) => q.includes('system.processes'));
    expect(looks).toHaveLength(views);
    for (const q of looks) expect(q).toContain("clusterAllReplicas('txa', system.processes)");
  });

  it('stops, in words, on a server without the cluster, the macros or GLOBAL subqueries', async () => {
    await expect(migrate(new RecordingWarehouse(CLUSTER, (s) => (s.includes('system.clusters') ? [{ n: '0' }] : readyCluster(s))))).rejects.toThrow(
      /no such cluster in remote_servers/,
    );
    await expect(migrate(new RecordingWarehouse(CLUSTER, (s) => (s.includes('system.macros') ? [{ macro: 'shard' }] : readyCluster(s))))).rejects.toThrow(
      /no \{replica\} macro/,
    );
    await expect(migrate(new RecordingWarehouse(CLUSTER, (s) => (s.includes('distributed_product_mode') ? [{ v: 'deny' }] : readyCluster(s))))).rejects.toThrow(
      /must be "global"/,
    );
  });
});

describe('view repair in cluster mode (recording warehouse, no server)', () => {
  it("deletes the buckets on every shard's local table and re-derives them from the whole base table through the Distributed target", async () => {
    const views = [
      {
        name: 'protocol_hourly_mv',
        as_select:
          'SELECT protocol_name, toStartOfHour(block_time) AS hour_start, count() AS tx_count FROM default.transactions_local GROUP BY protocol_name, hour_start',
        target: 'default.protocol_hourly_local',
      },
      {
        name: 'tx_by_address_mv',
        as_select: 'SELECT cityHash64(address) AS address_key, block_time, protocol_name FROM default.transactions_local',
        target: 'default.tx_by_address',
      },
    ];
    const rec = new RecordingWarehouse(CLUSTER, (sql, options) => {
      if (sql.includes("engine = 'MaterializedView'")) {
        expect(options?.params?.source).toBe('transactions_local');
        return views;
      }
      if (sql.includes('system.columns')) {
        return options?.params?.t === 'protocol_hourly'
          ? [
              { name: 'protocol_name', type: 'LowCardinality(String)' },
              { name: 'hour_start', type: "DateTime('UTC')" },
            ]
          : [
              { name: 'protocol_name', type: 'LowCardinality(String)' },
              { name: 'block_time', type: "DateTime('UTC')" },
            ];
      }
      return [];
    });
    await rebuildViewBuckets(rec, [{ protocol_name: 'pump_fun', hour_start: 1_700_000_000 - (1_700_000_000 % 3600) }]);
    expect(rec.execs).toHaveLength(4);
    expect(rec.execs[0]).toMatch(/^DELETE FROM default\.protocol_hourly_local ON CLUSTER txa WHERE .*toStartOfHour\(hour_start\)/);
    expect(rec.execs[1]).toMatch(
      /^INSERT INTO default\.protocol_hourly SELECT .* FROM \(SELECT \*, rid FROM default\.transactions WHERE [\s\S]*\) AS transactions_local GROUP BY/,
    );
    expect(rec.execs[2]).toMatch(/^DELETE FROM default\.tx_by_address_local ON CLUSTER txa WHERE .*toStartOfHour\(block_time\)/);
    expect(rec.execs[3]).toMatch(/^INSERT INTO default\.tx_by_address SELECT .* FROM \(SELECT \*, rid FROM default\.transactions WHERE /);
    // And the engine's parser reads each of them.
    for (const s of rec.execs) expect(await formatted(s)).toMatch(/^(DELETE|INSERT)/);
  });
});

describe('view repair of the signature index in cluster mode (recording warehouse, no server)', () => {
  // A mutation of a Replicated* table may not hold a subquery: the server refuses it
  // (BAD_ARGUMENTS, "ALTER UPDATE/ALTER DELETE statement with subquery may be nondeterministic")
  // because every replica would evaluate it on its own, at its own time. The keys of the
  // buckets' base rows are read first and bound as values.
  const index = {
    name: 'tx_rid_by_sig_mv',
    target: 'default.tx_rid_by_sig_local',
    as_select: 'SELECT cityHash64(signature) AS sig_key, instruction_index, rid FROM default.transactions_local',
  };
  const repair = async (keys: string[]): Promise<RecordingWarehouse> => {
    const rec = new RecordingWarehouse(CLUSTER, (sql) => {
      if (sql.includes("engine = 'MaterializedView'")) return [index];
      if (sql.includes('system.columns'))
        return [
          { name: 'sig_key', type: 'UInt64' },
          { name: 'instruction_index', type: 'UInt16' },
          { name: 'rid', type: 'UInt64' },
        ];
      if (/cityHash64\(signature\)/.test(sql)) return keys.map((k) => ({ k }));
      return [];
    });
    await rebuildViewBuckets(rec, [{ protocol_name: 'pump_fun', hour_start: 1_700_000_000 - (1_700_000_000 % 3600) }]);
    return rec;
  };

  it("deletes the buckets' base rows' (signature hash, instruction, id) entries bound as values, never by a subquery, then re-derives", async () => {
    const keys = Array.from({ length: 25_000 }, (_, i) => `${18_446_744_073_709_551_615n - BigInt(i >> 1)}#${i & 1}#${1_000_000 + i}`);
    const rec = await repair(keys);
    const deletes = rec.execs.flatMap((s, i) => (s.startsWith('DELETE') ? [i] : []));
    expect(deletes.length).toBeGreaterThan(0);
    const bound: unknown[] = [];
    for (const i of deletes) {
      expect(rec.execs[i]).toMatch(/^DELETE FROM default\.tx_rid_by_sig_local ON CLUSTER txa WHERE /);
      expect(rec.execs[i]).not.toMatch(/\bSELECT\b/i);
      expect(await formatted(rec.execs[i]!)).toMatch(/^DELETE/);
      const entries = rec.execParams[i]!.entries as unknown[];
      expect(entries.length).toBeLessThanOrEqual(10_000); // each statement's parameters stay a modest URL
      expect((rec.execParams[i]!.sk as unknown[]).map(String)).toEqual(entries.map((e) => String(e).split('#')[0]));
      bound.push(...entries);
    }
    expect(bound).toEqual(keys);
    expect(rec.execs.at(-1)).toMatch(/^INSERT INTO default\.tx_rid_by_sig SELECT .* FROM \(SELECT \*, rid FROM default\.transactions WHERE /);
    // Buckets without base rows hold no rows of this table to delete.
    expect((await repair([])).execs.filter((s) => s.startsWith('DELETE'))).toEqual([]);
  });
});

describe('the server transport in cluster mode (a recording HTTP endpoint, no server)', () => {
  it('sends GLOBAL subqueries on reads and foreground quorum inserts on writes; nothing extra on one server', async () => {
    const seen: { path: string; params: URLSearchParams }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      req.resume();
      req.on('end', () => {
        seen.push({ path: url.pathname, params: url.searchParams });
        res.setHeader('Content-Type', 'text/plain');
        res.setHeader('X-ClickHouse-Format', 'JSONEachRow');
        res.end('');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const cluster of ['txa', undefined]) {
        seen.length = 0;
        const s = new ServerWarehouse({ url, user: 'default', password: '', database: 'default', cluster });
        expect(s.cluster).toEqual(cluster === undefined ? undefined : { name: 'txa', database: 'default' });
        await s.query('SELECT 1');
        await s.insert('transactions', [{ a: 1 }]);
        await s.exec('SELECT 1');
        await s.close();
        const [read, insert, exec] = seen;
        if (cluster !== undefined) {
          expect(read!.params.get('distributed_product_mode')).toBe('global');
          expect(read!.params.get('insert_quorum')).toBeNull();
          for (const w of [insert!, exec!]) {
            expect(w.params.get('distributed_foreground_insert')).toBe('1');
            expect(w.params.get('insert_quorum')).toBe('auto');
            expect(w.params.get('distributed_product_mode')).toBe('global');
          }
        } else {
          for (const r of [read!, insert!, exec!]) {
            for (const k of ['distributed_product_mode', 'distributed_foreground_insert', 'insert_quorum']) expect(r.params.get(k)).toBeNull();
          }
        }
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the analytics layer is the same in both modes', () => {
  it('never reads the cluster setting: its SQL is one text, naming the same tables (Distributed ones in a cluster)', () => {
    const root = path.resolve(import.meta.dirname, '..', '..');
    const walk = (d: string): string[] =>
      readdirSync(path.join(root, d), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(path.join(d, e.name)) : e.name.endsWith('.ts') ? [path.join(d, e.name)] : [],
      );
    const readers = ['api', 'ingest', 'warehouse']
      .flatMap(walk)
      .filter((f) => /\.cluster\b|CLICKHOUSE_CLUSTER|clickhouse\.cluster/.test(readFileSync(path.join(root, f), 'utf8')));
    // Only the schema's owners (runner, repair, transports and their pass-through wrappers) know the mode.
    expect(readers.sort()).toEqual([
      'api/analytics/analytics-warehouse.ts',
      'warehouse/budgeted-warehouse.ts',
      'warehouse/cluster-layout.ts',
      'warehouse/earlier-inserts.ts',
      'warehouse/instrumented-warehouse.ts',
      'warehouse/migrate.ts',
      'warehouse/open-warehouse.ts',
      'warehouse/server-warehouse.ts',
      'warehouse/view-repair.ts',
      'warehouse/warehouse.ts',
    ]);
  });
});
