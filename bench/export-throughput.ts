// Export throughput (issue 13), on the real embedded engine and the real app in this process:
//  1. for PARQUET, CSV and JSONL and two sizes (--small rows, and every row): a filter export
//     job from POST to COMPLETED (planning, chunks, sha256 of every file, manifest), in rows/s,
//     against one bare `INSERT INTO FUNCTION file(...)` of the same rows, columns, order and
//     settings on a session of its own, in the same run; the ratio (target >= 0.8);
//  2. peak RSS of this process (API and engine) while the jobs run;
//  3. getProtocolStats p99 over JSON-RPC (each call a range of its own: no cache) quiet, and
//     while the export jobs run. The same serving load runs during the bare statements, so
//     the throughput ratio compares like with like.
// Usage: npx tsx bench/export-throughput.ts --rows 2000000 [--small 1000000] [--sizes 1000000,10000000] [--dir bench/tmp/export-2000000] [--formats PARQUET,CSV,JSONL] [--out file.json] [--trace]
import { mkdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../core/config/load-config.ts';
import { createLogger } from '../core/logger.ts';
import { buildApp } from '../api/server/app.ts';
import { createServices } from '../api/server/services.ts';
import { EXPORT_COLUMNS, FORMAT_FILES, type ExportFormat } from '../api/services/exports/export-config.ts';
import { writeSettings } from '../api/services/exports/export-writer.ts';
import { seedDemo } from '../ingest/demo-generator.ts';
import { progressPrinter } from '../ingest/seed.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { migrate } from '../warehouse/migrate.ts';
import { flag, machine, timeMs } from './bench-support.ts';

const rows = Number(flag('rows', '2000000'));
const small = Number(flag('small', '1000000'));
const dir = path.resolve(flag('dir', `bench/tmp/export-${rows}`));
const exportDir = path.resolve(`${dir}-exports`);
const formats = flag('formats', 'PARQUET,CSV,JSONL').split(',') as ExportFormat[];
// Export sizes (rows); by default --small and the whole store. A 100M-row store exports 10M.
const sizes = flag('sizes', '') === '' ? [...new Set([small, rows])] : flag('sizes', '').split(',').map(Number);
const trace = process.argv.includes('--trace');
const END = 1_767_225_600; // 2026-01-01T00:00:00Z: fixed, so runs are comparable
const START = END - 30 * 86_400;
const ADMIN = 'bench-admin-token-0123456789';

// Seed once (kept between runs), in a session that is closed before the service opens.
{
  const wh = new EmbeddedWarehouse(dir);
  await migrate(wh);
  const [n] = await wh.query<{ n: string }>('SELECT count() n FROM transactions');
  if (Number(n?.n ?? 0) === 0) await seedDemo(wh, { seed: 42, total: rows, startTime: START, endTime: END, sliceRows: 2_000_000 }, progressPrinter());
  // A store the ingest benchmark grew (its records are dated after the seed's) is still this store.
  else if (Number(n!.n) < rows) throw new Error(`${dir} holds ${n!.n} rows, fewer than ${rows}; use another --dir`);
  await wh.close();
}
rmSync(exportDir, { recursive: true, force: true });
const config = loadConfig({
  DATA_DIR: dir,
  EXPORT_DIR: exportDir,
  DEMO_ROWS: '0',
  ADMIN_TOKEN: ADMIN,
  LOG_LEVEL: 'silent',
  EXPORT_MAX_ROWS_ENTERPRISE: String(10 * rows),
  EXPORT_DISK_BUDGET_BYTES: String(200 * 1024 ** 3),
  EXPORT_RETENTION_HOURS: '1',
});
const services = await createServices(config, createLogger('silent'));
const app = await buildApp(services);
const key = (
  await app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization: `Bearer ${ADMIN}` }, payload: { name: 'bench', plan: 'enterprise' } })
).json<{ key: string }>().key;
const headers = { 'x-api-key': key, 'content-type': 'application/json' };
// Serving calls spread over keys of their own: one key's 2000/min would be spent in about a minute.
const servingKeys: string[] = [];
for (let i = 0; i < 16; i++) {
  servingKeys.push(
    (
      await app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { name: `serving-${i}`, plan: 'enterprise' },
      })
    ).json<{ key: string }>().key,
  );
}
const visible = await services.analytics.protocols();
const protocol = visible[0]!;

// The day range holding about `target` visible rows from the start (whole days).
async function rangeFor(target: number): Promise<{ start: string; end: string; rows: number }> {
  const days = await services.wh.query<{ d: string; n: string }>(
    'SELECT toString(date) d, count() n FROM transactions WHERE protocol_name IN {p:Array(String)} GROUP BY date ORDER BY date',
    { params: { p: visible } },
  );
  let total = 0;
  for (const d of days) {
    total += Number(d.n);
    if (total >= target) return { start: days[0]!.d, end: d.d, rows: total };
  }
  return { start: days[0]!.d, end: days.at(-1)!.d, rows: total };
}

let call = 0;
async function protocolStatsMs(): Promise<number> {
  const gte = START + (call++ % 500) * 3601;
  return timeMs(async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'x-api-key': servingKeys[call % servingKeys.length]!, 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: protocol, blockTime: { gte, lte: END } }] },
    });
    if (!r.body.includes('"result"')) throw new Error(r.body);
  });
}
const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * 0.99) - 1)] ?? NaN;

const quiet: number[] = [];
for (let i = 0; i < 20; i++) await protocolStatsMs(); // warm-up
for (let i = 0; i < 200; i++) quiet.push(await protocolStatsMs());

// The bare statement runs on a session of its own, like the job's.
const bare = new EmbeddedWarehouse(dir);
const bareDir = path.join(exportDir, 'bare');
mkdirSync(bareDir, { recursive: true });
const settings = writeSettings({ maxThreads: config.exports.maxThreads, timeoutSeconds: 3600 });

const { monitorEventLoopDelay } = await import('node:perf_hooks');
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let peakRss = process.memoryUsage().rss;
// Peaks by phase: the bare statements run in this same process, and a 9M-row ORDER BY of
// theirs holds far more than a job's 1M-row chunks; the job's own peak is what serving sees.
let phase: 'bare' | 'job' = 'bare';
const peakByPhase = { bare: peakRss, job: peakRss };
const rssTimer = setInterval(() => {
  const rss = process.memoryUsage().rss;
  peakRss = Math.max(peakRss, rss);
  peakByPhase[phase] = Math.max(peakByPhase[phase], rss);
}, 100);
const during: number[] = [];
const duringBare: number[] = [];
const results: Record<string, unknown>[] = [];

// Each format's first write in a process pays a warm-up (the 1M-row Parquet bare statement
// once ran at a third of its later speed); a small write of each format first keeps it out of
// both the job's and the bare statement's figures. Jobs run before their bare statement, so a
// job's peak RSS is not the allocator's memory kept from a 9M-row bare sort.
for (const format of formats) {
  const warm = path.join(bareDir, `warm.${FORMAT_FILES[format].ext}`);
  await bare.exec(`INSERT INTO FUNCTION file('${warm}', '${FORMAT_FILES[format].engine}') SELECT ${EXPORT_COLUMNS.join(', ')} FROM transactions LIMIT 20000`, {
    settings,
  });
  rmSync(warm, { force: true });
}

for (const target of sizes) {
  const range = await rangeFor(target);
  // Read the range's every column once first: on a store larger than memory (100M rows, 35 GB
  // on 24 GB) whichever ran first, the job or the bare statement, paid the disk reads for both
  // (a Parquet job ran at 0.15 of the bare statement that followed it, on a warm cache).
  await bare.query(`SELECT sum(cityHash64(${EXPORT_COLUMNS.join(', ')})) AS h FROM transactions
    WHERE block_time >= toDateTime(${Date.parse(`${range.start}T00:00:00Z`) / 1000}) AND block_time < toDateTime(${Date.parse(`${range.end}T00:00:00Z`) / 1000 + 86_400})`);
  for (const format of formats) {
    // The job, from POST to COMPLETED; serving is measured meanwhile, one call after another.
    phase = 'job';
    const t0 = performance.now();
    const created = await app.inject({
      method: 'POST',
      url: '/v1/exports',
      headers,
      payload: { format, filters: { dateRange: { start: range.start, end: range.end } } },
    });
    if (created.statusCode !== 202) throw new Error(created.body);
    const id = created.json<{ id: string }>().id;
    let job: { status: string; rowsWritten: number; error: string | null; files: { bytes: number }[]; createdAt: string; finishedAt: string };
    let polled = 0;
    for (;;) {
      // Status every 250 ms at most (its key's rate limit), serving calls back to back in between.
      if (performance.now() - polled >= 250) {
        job = (await app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers })).json();
        polled = performance.now();
        if (job.status !== 'QUEUED' && job.status !== 'RUNNING') break;
      }
      const ms = await protocolStatsMs();
      during.push(ms);
      if (trace)
        console.log(`at ${performance.now().toFixed(0)} t=${(performance.now() - t0).toFixed(0)} ms getProtocolStats ${ms.toFixed(0)} ms ${job!.status}`);
    }
    // The job's own clock (created to finished): polling, slowed by the serving calls, would add its delay.
    job = job!;
    const jobMs = Date.parse(job.finishedAt) - Date.parse(job.createdAt);
    const seenMs = performance.now() - t0;
    if (job.status !== 'COMPLETED') throw new Error(`job ${id}: ${job.status} ${job.error}`);
    if (job.rowsWritten !== range.rows) throw new Error(`job wrote ${job.rowsWritten} rows, expected ${range.rows}`);

    const file = path.join(bareDir, `bare-${range.rows}.${FORMAT_FILES[format].ext}`);
    // The same serving load runs beside the bare statement as beside the job: the ratio compares like with like.
    phase = 'bare';
    const bareStart = performance.now();
    let bareDone = false;
    const barePromise = bare
      .exec(
        `INSERT INTO FUNCTION file('${file}', '${FORMAT_FILES[format].engine}')
       SELECT ${EXPORT_COLUMNS.join(', ')} FROM transactions
       WHERE protocol_name IN (${visible.map((p) => `'${p}'`).join(', ')})
         AND block_time >= toDateTime(${Date.parse(`${range.start}T00:00:00Z`) / 1000}) AND block_time < toDateTime(${Date.parse(`${range.end}T00:00:00Z`) / 1000 + 86_400})
       ORDER BY block_time, signature, instruction_index`,
        { settings },
      )
      .then(() => {
        bareDone = true;
        return performance.now() - bareStart;
      });
    while (!bareDone) duringBare.push(await protocolStatsMs());
    const bareMs = await barePromise;
    // Unlinked off the event loop: a 6.5 GB file's unlink would be counted as the loop's delay.
    await rm(file, { force: true });

    const row = {
      format,
      rows: range.rows,
      jobSeconds: Number((jobMs / 1000).toFixed(2)),
      jobRowsPerSecond: Math.round(range.rows / (jobMs / 1000)),
      bareSeconds: Number((bareMs / 1000).toFixed(2)),
      bareRowsPerSecond: Math.round(range.rows / (bareMs / 1000)),
      ratio: Number((bareMs / jobMs).toFixed(3)),
      seenCompleteAfterSeconds: Number((seenMs / 1000).toFixed(2)),
      bytes: job.files.reduce((a, f) => a + f.bytes, 0),
      files: job.files.length,
    };
    results.push(row);
    console.log(JSON.stringify(row));
    // Files are removed between runs so the disk holds one export at a time.
    await rm(path.join(exportDir, 'files', id), { recursive: true, force: true });
  }
}
clearInterval(rssTimer);

const report = {
  date: new Date().toISOString(),
  machine: machine(),
  command: `npx tsx bench/export-throughput.ts ${process.argv.slice(2).join(' ')}`.trim(),
  storeRows: rows,
  exportMaxThreads: config.exports.maxThreads,
  fileMaxRows: config.exports.fileMaxRows,
  results,
  peakRssMiB: Math.round(peakRss / 2 ** 20),
  peakRssMiBDuringJobs: Math.round(peakByPhase.job / 2 ** 20),
  peakRssMiBDuringBare: Math.round(peakByPhase.bare / 2 ** 20),
  eventLoopDelayMs: { p99: Number((loopDelay.percentile(99) / 1e6).toFixed(1)), max: Number((loopDelay.max / 1e6).toFixed(1)) },
  getProtocolStatsP99Ms: {
    quiet: Number(p99(quiet).toFixed(1)),
    duringExportJobs: Number(p99(during).toFixed(1)),
    callsDuringJobs: during.length,
    duringBareInserts: Number(p99(duringBare).toFixed(1)),
    callsDuringBare: duringBare.length,
  },
};
console.log(JSON.stringify(report, null, 2));
mkdirSync('bench/results', { recursive: true });
const { writeFileSync } = await import('node:fs');
writeFileSync(flag('out', `bench/results/export-throughput-${rows}.json`), `${JSON.stringify(report, null, 2)}\n`);
await app.close();
await bare.close();
await services.close();
rmSync(exportDir, { recursive: true, force: true });
