// Storage-foundation benchmark (issue 2), on the real embedded engine:
//  1. seeding rate: demo rows generated inside the engine into the base table and every view;
//  2. disk bytes per row, per table and in total;
//  3. protocol stats for one protocol over the full range through the analytics layer
//     (views + ragged edges, result cache bypassed) vs. a raw scan of the base table,
//     median of repeated runs, and their ratio.
// Usage: npx tsx bench/seed-and-stats.ts --rows 10000000 [--dir bench/tmp/10m] [--runs 7] [--keep]
import { rmSync } from 'node:fs';
import path from 'node:path';
import { compile } from '../api/analytics/question/compile.ts';
import { PRESETS } from '../api/analytics/presets/presets.ts';
import { seedDemo } from '../ingest/demo-generator.ts';
import { progressPrinter } from '../ingest/seed.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { migrate } from '../warehouse/migrate.ts';
import { flag, machine, median, timeMs } from './bench-support.ts';

const rows = Number(flag('rows', '10000000'));
const dir = path.resolve(flag('dir', `bench/tmp/seed-${rows}`));
const runs = Number(flag('runs', '7'));
const keep = process.argv.includes('--keep');
const END = 1_767_225_600; // 2026-01-01T00:00:00Z: fixed, so runs are comparable
const START = END - 30 * 86_400;

const wh = new EmbeddedWarehouse(dir);
await migrate(wh);
const [existing] = await wh.query<{ n: string }>('SELECT count() n FROM transactions');
let seedRate: number | undefined;
if (Number(existing?.n ?? 0) === 0) {
  const t0 = Date.now();
  await seedDemo(wh, { seed: 42, total: rows, startTime: START, endTime: END, sliceRows: 2_000_000 }, progressPrinter());
  const secs = (Date.now() - t0) / 1000;
  seedRate = rows / secs;
  console.log(`seeded ${rows} rows in ${secs.toFixed(1)} s = ${Math.round(seedRate).toLocaleString('en-US')} rows/s`);
} else if (Number(existing!.n) !== rows) {
  throw new Error(`${dir} holds ${existing!.n} rows, not ${rows}; use another --dir`);
}

// The engine merges parts in the background, in this process, for a long while after a
// large seed; that work would be timed along with the queries. Merge the small hourly view
// fully (as it will be in steady state), then pause merges while timing.
await wh.exec('OPTIMIZE TABLE protocol_hourly FINAL');
await wh.exec('SYSTEM STOP MERGES');
const [parts] = await wh.query<{ base: string; view: string }>(
  `SELECT countIf(table = 'transactions') base, countIf(table = 'protocol_hourly') view
   FROM system.parts WHERE active AND database = currentDatabase()`,
);
const disk = await wh.query<{ table: string; rows: string; bytes: string }>(
  `SELECT table, sum(rows) rows, sum(bytes_on_disk) bytes FROM system.parts WHERE active AND database = currentDatabase()
   GROUP BY table ORDER BY sum(bytes_on_disk) DESC`,
);
const totalBytes = disk.reduce((n, d) => n + Number(d.bytes), 0);

const protocol = 'jupiter_v6';
/** The protocol-stats figures computed by scanning the base table only: the reference the view read is timed against. */
const SCAN = `SELECT count() AS tx_count, countIf(success) AS success_count, sum(fee) AS fee_sum, sum(compute_units) AS cu_sum,
  sum(accounts_count) AS accounts_sum, toUInt32(min(block_time)) AS first_seen, toUInt32(max(block_time)) AS last_seen,
  uniqExact(instruction_type) AS instruction_types
  FROM transactions WHERE protocol_name = {p:String}`;
const viewTimes: number[] = [];
const scanTimes: number[] = [];
let viewCount = 0;
let scanCount = 0;
for (let i = 0; i < runs; i++) {
  viewTimes.push(
    await timeMs(async () => {
      const statement = compile(PRESETS.stats({ protocols: [protocol], range: {} }))!;
      const [a] = await wh.query<{ m_count: number }>(statement.sql, { params: statement.params });
      viewCount = Number(a?.m_count ?? 0);
    }),
  );
  scanTimes.push(
    await timeMs(async () => {
      const [r] = await wh.query<{ tx_count: string }>(SCAN, { params: { p: protocol } });
      scanCount = Number(r?.tx_count ?? 0);
    }),
  );
}
if (viewCount !== scanCount) throw new Error(`view and scan disagree: ${viewCount} vs ${scanCount}`);

const report = {
  date: new Date().toISOString(),
  machine: machine(),
  rows,
  seedRowsPerSecond: seedRate === undefined ? 'not measured (store already seeded)' : Math.round(seedRate),
  diskBytesPerRow: Math.round(totalBytes / rows),
  diskPerTable: Object.fromEntries(disk.map((d) => [d.table, { rows: Number(d.rows), bytesPerBaseRow: Math.round(Number(d.bytes) / rows) }])),
  protocolStats: {
    protocol,
    activeParts: { transactions: Number(parts?.base), protocol_hourly: Number(parts?.view) },
    records: viewCount,
    viewMedianMs: Number(median(viewTimes).toFixed(2)),
    scanMedianMs: Number(median(scanTimes).toFixed(2)),
    ratio: Number((median(scanTimes) / median(viewTimes)).toFixed(1)),
    runs,
  },
};
console.log(JSON.stringify(report, null, 2));
await wh.exec('SYSTEM START MERGES');
await wh.close();
if (!keep) rmSync(dir, { recursive: true, force: true });
