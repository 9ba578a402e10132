// Benchmark: stream ROWS rows (default 1,000,000) of the transactions table as CSV, and the
// server's memory meanwhile. Two modes:
//   pages  - over HTTP, POST /v1/query format csv, in pages of 10000 rows (the client cap);
//   lifted - in-process through the analytics layer with the row cap lifted internally
//            (what an export job would do), one streamed query.
// Usage: ROWS=1000000 MODE=both npx tsx bench/sql-csv-stream.ts   (DATA_DIR=… reuses a seeded store)
import { Budget } from '../core/budget.ts';
import { SQL_MAX_LIMIT } from '../api/services/sql/sql-guard.ts';
import { apiKeyHeader, memorySampler, startBenchServer } from './bench-server.ts';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const MODE = (process.env.MODE ?? 'both') as 'pages' | 'lifted' | 'both';
const COLUMNS = 'signature, block_time, protocol_name, instruction_type, fee, compute_units, success';
// Table order (the sorting key), so deep pages read in order rather than sort everything.
const ORDER = 'ORDER BY protocol_name, block_time, signature, instruction_index';

async function drain(body: AsyncIterable<Uint8Array>): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines += 1; // LF; quoted newlines in values would count too (none in these columns)
  }
  return { bytes, lines };
}

async function pages(baseUrl: string, headers: Record<string, string>, visible: number) {
  const want = Math.min(ROWS, visible);
  let rows = 0;
  let bytes = 0;
  let requests = 0;
  const mem = memorySampler();
  const t0 = performance.now();
  for (let offset = 0; offset < want; offset += SQL_MAX_LIMIT) {
    const res = await fetch(`${baseUrl}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: `SELECT ${COLUMNS} FROM transactions ${ORDER} LIMIT ${SQL_MAX_LIMIT} OFFSET ${offset}`, format: 'csv' }),
    });
    if (res.status !== 200 || !res.body) throw new Error(`page at ${offset}: HTTP ${res.status} ${await res.text()}`);
    const got = await drain(res.body as unknown as AsyncIterable<Uint8Array>);
    requests += 1;
    rows += got.lines - 1; // header row
    bytes += got.bytes;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { mode: 'pages', rows, requests, bytes, seconds: round(seconds), rowsPerSecond: Math.round(rows / seconds), ...mem.stop() };
}

// The export path's budget: a file, so no answer-bytes cap (the SQL door's 32 MiB would stop it).
async function lifted(server: Awaited<ReturnType<typeof startBenchServer>>, visible: number) {
  const want = Math.min(ROWS, visible);
  const mem = memorySampler();
  const t0 = performance.now();
  const { body } = await server.services.sqlSandbox.csv(
    { key: 'bench', plan: 'enterprise', budget: new Budget('enterprise', 'export') },
    `SELECT ${COLUMNS} FROM transactions ${ORDER} LIMIT ${want}`,
    { maxResultRows: want },
  );
  const got = await drain(body);
  const seconds = (performance.now() - t0) / 1000;
  return {
    mode: 'lifted',
    rows: got.lines - 1,
    requests: 1,
    bytes: got.bytes,
    seconds: round(seconds),
    rowsPerSecond: Math.round((got.lines - 1) / seconds),
    ...mem.stop(),
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const server = await startBenchServer(ROWS);
try {
  const [v] = await server.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)}', {
    params: { a: await server.services.analytics.protocols() },
  });
  const visible = Number(v?.n ?? 0);
  process.stderr.write(`${visible} visible rows; streaming up to ${ROWS}\n`);
  const results = [];
  if (MODE !== 'lifted') results.push(await pages(server.baseUrl, apiKeyHeader(server), visible));
  if (MODE !== 'pages') results.push(await lifted(server, visible));
  for (const r of results) {
    process.stdout.write(
      `${r.mode}: ${r.rows} rows in ${r.seconds} s (${r.rowsPerSecond} rows/s, ${r.requests} requests, ${(r.bytes / 1e6).toFixed(1)} MB), peak RSS ${r.peakRssMb} MB (start ${r.startRssMb} MB), peak heap ${r.peakHeapMb} MB\n`,
    );
  }
  process.stdout.write(`${JSON.stringify({ bench: 'sql-csv-stream', rowsRequested: ROWS, results })}\n`);
} finally {
  await server.close();
}
