import { mkdtempSync, rmSync, writeFileSync, readFileSync, readdirSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { MIGRATIONS_DIR, loadMigrations, migrate, migrationStatus, splitStatements } from '../../warehouse/migrate.ts';
import { BASE_COLUMNS, TABLES } from '../../warehouse/tables.ts';

let dir: string;
let wh: EmbeddedWarehouse;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'txa-mig-'));
  wh = new EmbeddedWarehouse(path.join(dir, 'data'));
});
afterAll(async () => {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrations', () => {
  it('apply in order once, then are a no-op at every later start', async () => {
    const first = await migrate(wh);
    expect(first.applied).toEqual(loadMigrations().map((m) => m.name));
    expect(first.applied[0]).toBe('001_transactions');
    const second = await migrate(wh);
    expect(second.applied).toEqual([]);
    expect(await migrationStatus(wh)).toEqual({ expected: first.current, applied: first.current });
    // The registry's seed rows were inserted once, not once per start.
    const [r] = await wh.query<{ n: string }>('SELECT count() n FROM protocols');
    expect(Number(r!.n)).toBe(12);
  });

  it('create every table a view writes to, each view targeting an explicit table', async () => {
    const rows = await wh.query<{ name: string; engine: string; create_table_query: string }>(
      "SELECT name, engine, create_table_query FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'",
    );
    expect(rows.map((r) => r.name).sort()).toEqual([
      'failure_hourly_mv',
      'ingest_freshness_mv',
      'ingest_keys_mv',
      'instruction_hourly_mv',
      'protocol_hourly_mv',
      'tx_by_address_v2_mv',
      'tx_by_rid_mv',
      'tx_rid_by_sig_mv',
    ]);
    for (const r of rows) expect(r.create_table_query).toMatch(/ TO default\.\w+/);
  });

  it('create every table the code names, and the base table with the columns the ingest path writes', async () => {
    const tables = await wh.query<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() AND engine != 'MaterializedView'");
    const names = new Set(tables.map((t) => t.name));
    for (const name of Object.values(TABLES)) expect(names, name).toContain(name);
    const cols = await wh.query<{ name: string; default_kind: string }>(
      "SELECT name, default_kind FROM system.columns WHERE database = currentDatabase() AND table = 'transactions'",
    );
    // The ingest path writes every column that has no default, and only columns a client
    // may write (not MATERIALIZED or ALIAS ones, which the table computes).
    const writable = cols.filter((c) => c.default_kind === '' || c.default_kind === 'DEFAULT' || c.default_kind === 'EPHEMERAL').map((c) => c.name);
    for (const c of cols.filter((x) => x.default_kind === '')) expect(BASE_COLUMNS, c.name).toContain(c.name);
    for (const c of BASE_COLUMNS) expect(writable, c).toContain(c);
  });

  it('refuse to run when an applied migration was edited', async () => {
    const copy = path.join(dir, 'migrations');
    mkdirSync(copy);
    for (const f of readdirSync(MIGRATIONS_DIR)) writeFileSync(path.join(copy, f), readFileSync(path.join(MIGRATIONS_DIR, f)));
    writeFileSync(path.join(copy, '005_instruction_hourly.sql'), `${readFileSync(path.join(copy, '005_instruction_hourly.sql'), 'utf8')}\n-- edited\n`);
    await expect(migrate(wh, () => {}, loadMigrations(copy))).rejects.toThrow(/005_instruction_hourly was changed after it was applied/);
  });

  it('apply a new numbered file on the next start', async () => {
    const copy = path.join(dir, 'migrations2');
    mkdirSync(copy);
    for (const f of readdirSync(MIGRATIONS_DIR)) writeFileSync(path.join(copy, f), readFileSync(path.join(MIGRATIONS_DIR, f)));
    writeFileSync(path.join(copy, '999_extra.sql'), '-- a comment; with a semicolon\nCREATE TABLE IF NOT EXISTS extra_t (x UInt8) ENGINE = Memory;\n');
    const r = await migrate(wh, () => {}, loadMigrations(copy));
    expect(r.applied).toEqual(['999_extra']);
    expect(await wh.query("SELECT name FROM system.tables WHERE name = 'extra_t'")).toEqual([{ name: 'extra_t' }]);
  });

  it('split files into statements at line-ending semicolons only', () => {
    expect(
      splitStatements("-- why; because\nCREATE TABLE a (s String DEFAULT ';') ENGINE = Memory;\n\nINSERT INTO a VALUES ('x;y');\n-- trailing comment\n"),
    ).toEqual(["-- why; because\nCREATE TABLE a (s String DEFAULT ';') ENGINE = Memory", "INSERT INTO a VALUES ('x;y')"]);
  });
});
