// Migration 110 (record ids, issue 37) on a seeded store: bytes a record per table before and
// after, on the same records, and how long 110 takes (its statements one by one).
//   npx tsx bench/rid-migration.ts --rows 10000000 --dir bench/tmp/rid10m
// Seeds with every migration before 110 (the demo's rows then carry no transaction_index, as a
// store's did), merges each table to few parts as a store at rest has them, measures, applies
// 110 statement by statement with timings, lets merges settle, measures again. The store is
// kept: the page and point-read benches (rpc-load.ts, capped.ts) run on it afterwards.
import path from 'node:path';
import { seedDemo } from '../ingest/demo-generator.ts';
import { progressPrinter } from '../ingest/seed.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../warehouse/migrate.ts';
import { flag, machine } from './bench-support.ts';

const rows = Number(flag('rows', '10000000'));
const dir = path.resolve(flag('dir', `bench/tmp/rid-${rows}`));
const END = 1_767_225_600; // as seed-and-stats.ts: 30 days to 2026-01-01
const START = END - 30 * 86_400;
const wh = new EmbeddedWarehouse(dir);

async function bytes(): Promise<Record<string, number>> {
  const disk = await wh.query<{ table: string; bytes: string }>(
    'SELECT table, sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table',
  );
  const out: Record<string, number> = {};
  for (const d of disk) out[d.table] = Math.round((Number(d.bytes) / rows) * 10) / 10;
  out.total = Math.round(disk.reduce((n, d) => n + Number(d.bytes), 0) / rows);
  return out;
}

/** Merge what merges would merge at rest: a store measured right after a seed holds many parts. */
async function settle(tables: readonly string[]): Promise<void> {
  for (const t of tables) await wh.exec(`OPTIMIZE TABLE ${t} FINAL`);
}

const lookups = async () =>
  (
    await wh.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name NOT IN ('schema_migrations')",
    )
  ).map((r) => r.name);

await migrate(
  wh,
  () => {},
  loadMigrations().filter((m) => m.version < 110),
);
const [n] = await wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
const report: Record<string, unknown> = { date: new Date().toISOString(), machine: machine(), rows };
if (Number(n!.n) === 0) {
  const t0 = Date.now();
  await seedDemo(wh, { seed: 42, total: rows, startTime: START, endTime: END, sliceRows: 2_000_000 }, progressPrinter());
  report.seedRowsPerSecond = Math.round(rows / ((Date.now() - t0) / 1000));
}
await settle(await lookups());
report.before = await bytes();
console.log(JSON.stringify(report));

const m110 = loadMigrations().find((m) => m.version === 110)!;
const steps: { statement: string; seconds: number }[] = [];
const exec = wh.exec.bind(wh);
wh.exec = async (sql, options) => {
  const t = Date.now();
  const r = await exec(sql, options);
  steps.push({
    statement: sql
      .replace(/^(\s|--.*\n)*/, '')
      .slice(0, 50)
      .replace(/\s+/g, ' '),
    seconds: (Date.now() - t) / 1000,
  });
  return r;
};
const t1 = Date.now();
await migrate(
  wh,
  () => {},
  loadMigrations().filter((m) => m.version <= m110.version),
);
report.migration110Seconds = (Date.now() - t1) / 1000;
report.migration110Steps = steps.filter((s) => s.seconds >= 0.5);
wh.exec = exec;
await settle(await lookups());
report.after = await bytes();
console.log(JSON.stringify(report, null, 2));
await wh.close();
