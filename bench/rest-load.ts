// Benchmark: requests per second of GET /api/v1/analytics/protocols under autocannon.
// Starts an in-process server on a seeded embedded store, or targets BASE_URL when given.
// Usage: ROWS=1000000 DURATION=30 CONNECTIONS=20 npx tsx bench/rest-load.ts
//        BASE_URL=http://127.0.0.1:8080 API_KEY=… npx tsx bench/rest-load.ts
import autocannon from 'autocannon';
import { apiKeyHeader, startBenchServer, type BenchServer } from './bench-server.ts';

const ROWS = Number(process.env.ROWS ?? 200_000);
const DURATION = Number(process.env.DURATION ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const PROTOCOL = process.env.PROTOCOL ?? 'jupiter_v6';

let server: BenchServer | undefined;
let baseUrl = process.env.BASE_URL;
if (baseUrl === undefined) {
  server = await startBenchServer(ROWS);
  baseUrl = server.baseUrl;
}
try {
  // The last week of the data (the store may have been seeded at another time): whole days
  // from the views; the cache answers repeats, which is what a polling dashboard sees.
  const last = server
    ? Number((await server.services.wh.query<{ t: number }>('SELECT toUInt32(max(hour_start)) AS t FROM protocol_hourly'))[0]?.t ?? 0) * 1000
    : Date.now();
  const today = new Date(last).toISOString().slice(0, 10);
  const weekAgo = new Date(last - 7 * 86_400_000).toISOString().slice(0, 10);
  const path = `/api/v1/analytics/protocols?protocol_name=${PROTOCOL}&date_from=${weekAgo}&date_to=${today}`;
  const headers = apiKeyHeader(server);
  const probe = await fetch(`${baseUrl}${path}`, { headers });
  const probeBody = await probe.text();
  if (probe.status !== 200) throw new Error(`probe: HTTP ${probe.status} ${probeBody}`);
  process.stdout.write(`probe answer: ${probeBody.slice(0, 200)}\n`);
  const result = await autocannon({ url: `${baseUrl}${path}`, connections: CONNECTIONS, duration: DURATION, headers });
  const summary = {
    bench: 'rest-load',
    path,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    requestsPerSecond: result.requests.average,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
  };
  process.stdout.write(
    `${summary.requestsPerSecond} req/s, latency p50 ${summary.latencyMs.p50} ms, p99 ${summary.latencyMs.p99} ms, non-2xx ${summary.non2xx}, errors ${summary.errors}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  await server?.close();
}
