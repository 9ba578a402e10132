// Two processes starting at once (an API and an ingest service, or two API replicas) both
// run the migrations: one applies what is pending while the other waits, so a migration
// that copies a table (090) copies it once. A lock left by a process that died is taken over
// once its lease has run out. Processes are stood in for by two engine sessions over one
// data directory. Its own file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate, type Migration } from '../../warehouse/migrate.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';

const START = 1_735_689_600; // 2025-01-01
let dir: string;
let wh: EmbeddedWarehouse;

/** The same store through another engine session: another process's view of it. */
function otherProcess(w: EmbeddedWarehouse): Warehouse {
  const o = (x?: QueryOptions): QueryOptions => ({ ...x, sideSession: 0 });
  return {
    transport: 'embedded',
    cluster: undefined,
    query: (s, x) => w.query(s, o(x)),
    queryText: (s, f, x) => w.queryText(s, f, o(x)),
    stream: (s, f, x) => w.stream(s, f, o(x)),
    exec: (s, x) => w.exec(s, o(x)),
    insert: (t, r, x) => w.insert(t, r, x),
    insertBytes: (t, d, f, x) => w.insertBytes(t, d, f, x),
    close: async () => {},
  };
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'txa-migrate-lock-'));
  wh = new EmbeddedWarehouse(path.join(dir, 'data'));
});
afterAll(async () => {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the migration runner, started twice at once', () => {
  it('applies 090 once: every record once in tx_by_signature_v3, the migration recorded once', async () => {
    await migrate(
      wh,
      () => {},
      loadMigrations().filter((m) => m.version < 90),
    );
    await insertDemoRows(wh, { seed: 9, total: 200_000, offset: 0, count: 200_000, startTime: START, endTime: START + 86_400 });
    const upTo90 = loadMigrations().filter((m) => m.version <= 90);
    const [a, b] = await Promise.all([migrate(wh, () => {}, upTo90), migrate(otherProcess(wh), () => {}, upTo90)]);
    expect([...a.applied, ...b.applied]).toEqual(['090_packed_signature_records']);
    const [n] = await wh.query<{ base: string; v3: string; distinct: string; recorded: string }>(
      `SELECT (SELECT count() FROM transactions) AS base, (SELECT count() FROM tx_by_signature_v3) AS v3,
              (SELECT uniqExact(sig_key, instruction_index) FROM tx_by_signature_v3) AS distinct,
              (SELECT count() FROM schema_migrations WHERE version = 90) AS recorded`,
    );
    expect(n).toEqual({ base: '200000', v3: '200000', distinct: '200000', recorded: '1' });
    expect(await wh.query("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'schema_migrations_lock%'")).toEqual([]);
  });

  it('waits while another runner holds the lock, and takes over a lock whose lease ran out', async () => {
    // A migration of this test's own, one per case.
    const extra = (v: number): Migration[] => [
      ...loadMigrations(),
      {
        version: v,
        name: `${v}_lock_test`,
        checksum: `lock-test-${v}`,
        statements: [`CREATE TABLE IF NOT EXISTS lock_test_${v} (x UInt8) ENGINE = MergeTree ORDER BY x`],
      },
    ];
    // The service's own migrations first (those after 090 too), so only the test's is pending.
    await migrate(wh, () => {}, loadMigrations());
    await wh.exec("CREATE TABLE schema_migrations_lock (owner String, until DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()");
    await wh.exec("INSERT INTO schema_migrations_lock SELECT 'someone-else', now64(3, 'UTC') + INTERVAL 1 MINUTE");
    let done = false;
    const run = migrate(otherProcess(wh), () => {}, extra(9001)).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(done).toBe(false);
    await wh.exec('DROP TABLE schema_migrations_lock SYNC');
    expect((await run).applied).toEqual(['9001_lock_test']);

    // A holder that died: its lease is over, so the next runner takes the lock over.
    await wh.exec("CREATE TABLE schema_migrations_lock (owner String, until DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()");
    await wh.exec("INSERT INTO schema_migrations_lock SELECT 'died', now64(3, 'UTC') - INTERVAL 1 SECOND");
    expect((await migrate(wh, () => {}, extra(9002))).applied).toEqual(['9002_lock_test']);
    expect(await wh.query("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'schema_migrations_lock%'")).toEqual([]);
  });
});
