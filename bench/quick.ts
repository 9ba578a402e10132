// npm run bench:quick: a short run of every benchmark (a few seconds each, small stores) and
// one table of ratios, so a change that slows a path shows before it lands. Every figure is
// a ratio measured within its own run (to the engine's own work or to a bare route), so it
// compares across machines; absolute rates are printed beside it for reference only.
// Each benchmark runs in a child process of its own (the embedded engine binds one data
// directory per process); one that fails or overruns is reported as such, not hidden.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machine } from './bench-support.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
interface Row {
  benchmark: string;
  figure: string;
  value: string;
  ratio: number | null;
  of: string;
}
const rows: Row[] = [];

function run(script: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ out: string; ok: boolean; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', () => undefined);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ out, ok: code === 0, ms: Date.now() - t0 });
    });
  });
}
const lastJson = (out: string): Record<string, any> | undefined => {
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  return line === undefined ? undefined : JSON.parse(line);
};
const failed = (benchmark: string, r: { ms: number }): void =>
  void rows.push({ benchmark, figure: `failed or over time (${(r.ms / 1000).toFixed(0)} s)`, value: '', ratio: null, of: '' });

const tmp = mkdtempSync(path.join(tmpdir(), 'txa-quick-'));
const t0 = Date.now();
try {
  process.stderr.write(`bench:quick on ${machine()}\n`);
  // 1. Ingest: insert paths and the pipeline against the engine's own insert of the same bytes.
  let r = await run('ingest-paths.ts', ['--rows', '100000', '--records', '10000'], { DATA_DIR: path.join(tmp, 'ingest') }, 90_000);
  const ingest = lastJson(r.out);
  if (!r.ok || !ingest) failed('ingest (100k store, 10k records)', r);
  else {
    for (const [k, v] of Object.entries(ingest.ratios as Record<string, number>)) {
      if (k.startsWith('ceiling')) continue;
      rows.push({
        benchmark: 'ingest (100k store, 10k records)',
        figure: k,
        value: `${ingest.results[k].recordsPerSec} rec/s`,
        ratio: v,
        of: `engine's insert of the same NDJSON (${ingest.ceilingRecordsPerSec} rec/s)`,
      });
    }
  }
  // 2. Aggregates: view-backed protocol stats against a raw scan computing the same figures.
  r = await run('seed-and-stats.ts', ['--rows', '200000', '--runs', '3', '--dir', path.join(tmp, 'seed')], {}, 60_000);
  const seedJson = r.out.slice(r.out.indexOf('{\n'));
  if (!r.ok || !r.out.includes('{\n')) failed('storage (200k rows)', r);
  else {
    const s = JSON.parse(seedJson);
    rows.push({
      benchmark: 'storage (200k rows)',
      figure: 'protocol stats: raw scan / view',
      value: `${s.protocolStats.viewMedianMs} ms view`,
      ratio: s.protocolStats.ratio,
      of: `scan ${s.protocolStats.scanMedianMs} ms`,
    });
    rows.push({
      benchmark: 'storage (200k rows)',
      figure: 'seeding through all views',
      value: `${s.seedRowsPerSecond} rows/s`,
      ratio: null,
      of: `${s.diskBytesPerRow} disk bytes per row`,
    });
  }
  // 3. JSON-RPC under load: each method against a bare route of the same server.
  r = await run(
    'rpc-load.ts',
    [],
    { BENCH_SECONDS: '3', BENCH_SINGLE: '0', BENCH_ROWS: '100000', BENCH_CONNECTIONS: '20', DATA_DIR: path.join(tmp, 'rpc') },
    90_000,
  );
  const rpc = lastJson(r.out);
  if (!r.ok || !rpc) failed('JSON-RPC (100k rows, 20 conn)', r);
  else
    for (const x of rpc.results.slice(1))
      rows.push({
        benchmark: 'JSON-RPC (100k rows, 20 conn)',
        figure: x.scenario,
        value: `${x.requestsPerSec} req/s, p99 ${x.p99Ms} ms`,
        ratio: x.ratioToBare,
        of: `bare route (${rpc.results[0].requestsPerSec} req/s)`,
      });
  // 3b. The point reads of each door past memory (issue 25): the same store, in memory and under
  // memcap at a third of it (plus what the processes themselves took), as ratios to the bare route.
  // One second of warm-up a scenario: this store is a few tens of MB, cached in that second.
  r = await run(
    'capped.ts',
    ['--headroom', 'measured', '--warmup', '1'],
    {
      BENCH_SECONDS: '2',
      BENCH_SINGLE: '0',
      BENCH_ROWS: '100000',
      BENCH_CONNECTIONS: '20',
      BENCH_ONLY: 'getTransaction,getTransactionsForAddress random,REST,GraphQL',
      DATA_DIR: path.join(tmp, 'rpc'),
    },
    140_000,
  );
  const capped = lastJson(r.out);
  const capName = 'past memory (100k rows, memcap a third of the store)';
  if (!r.ok || !capped) failed(capName, r);
  else {
    for (const x of (capped.rows as Record<string, string | number>[]).slice(1)) {
      const under = x['ratio to bare '];
      rows.push({
        benchmark: capName,
        figure: String(x.scenario),
        value:
          under === ''
            ? 'no capped run (memcap needs root and cgroup v1)'
            : `${x[`cap ${capped.cap}: req/s`]} req/s capped, ${x['in memory: req/s']} in memory`,
        ratio: under === '' ? null : Number(under),
        of: `bare route of the capped run (in memory: ${x['ratio to bare']}; capped / in memory ${x['capped ratio / in-memory ratio']})`,
      });
    }
  }
  // 4. GraphQL against JSON-RPC getProtocolStats in the same run.
  r = await run('graphql-load.ts', [], { BENCH_SECONDS: '3', BENCH_ROWS: '20000', BENCH_CONNECTIONS: '20' }, 60_000);
  const gql = lastJson(r.out);
  if (!r.ok || !gql) failed('GraphQL (20k rows, 20 conn)', r);
  else
    for (const x of gql.results.slice(1))
      rows.push({
        benchmark: 'GraphQL (20k rows, 20 conn)',
        figure: x.scenario,
        value: `${x.requestsPerSec} req/s`,
        ratio: x.rpsRatio ?? null,
        of: 'JSON-RPC getProtocolStats',
      });
  // 5. Kafka: our source against ClickHouse's own Kafka engine on the same topic and tables.
  // 50k records: each consumer is timed from its first stored rows to its last, and 10k records
  // (two or three batches of ~4k) left one batch to time (a run read 552k records/s).
  r = await run('kafka-ingest.ts', ['--count', '50000', '--rate', '10000', '--seconds', '3'], {}, 120_000);
  if (!r.ok) failed('Kafka (50k records)', r);
  else {
    const k = JSON.parse(readFileSync(path.join(ROOT, 'bench', 'results', 'kafka-ingest-50000.json'), 'utf8'));
    rows.push({
      benchmark: 'Kafka (50k records)',
      figure: 'our source end-to-end',
      value: `${k.oursRecordsPerSecond} rec/s`,
      ratio: k.ratioOursToEngine ?? null,
      of: `ClickHouse Kafka engine (${k.clickhouseKafkaEngineRecordsPerSecond} rec/s)`,
    });
  }
  // 6. Exports: a job against one bare INSERT INTO FUNCTION file() of the same rows, per format.
  const exportOut = path.join(tmp, 'export.json');
  r = await run('export-throughput.ts', ['--rows', '200000', '--sizes', '100000', '--dir', path.join(tmp, 'export'), '--out', exportOut], {}, 120_000);
  if (!r.ok) failed('exports (200k store, ~100k rows)', r);
  else {
    const e = JSON.parse(readFileSync(exportOut, 'utf8'));
    for (const x of e.results)
      rows.push({
        benchmark: 'exports (200k store, ~100k rows)',
        figure: `${x.format} job`,
        value: `${x.jobRowsPerSecond} rows/s`,
        ratio: x.ratio,
        of: `bare INSERT INTO FUNCTION file() (${x.bareRowsPerSecond} rows/s)`,
      });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.table(rows);
process.stderr.write(`bench:quick took ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
