// Load test of POST /graphql against JSON-RPC getProtocolStats in the same run, over
// loopback with autocannon in a process of its own (load-client.ts): req/s and p99 of
//   - protocolStats(filters: {protocols: ["jupiter_v6"]}), the GraphQL form of the same question;
//   - transactions(groupBy: [PROTOCOL], metrics: [COUNT, P95_FEE]) over every protocol;
// each as a ratio to getProtocolStats (target >= 0.8). GraphQL answers carry the guard's
// work on top (parse, validate, plan, EXPLAIN ESTIMATE per field, cached per data version).
//
//   npx tsx bench/graphql-load.ts                                   # 200k demo rows, 20 s per scenario
//   BENCH_SECONDS=10 BENCH_ROWS=100000 npx tsx bench/graphql-load.ts   # a few minutes on 2 cores
//   BENCH_ROWS=10000000 DATA_DIR=bench/tmp/rpc10m npx tsx bench/graphql-load.ts   # 10M rows, store kept for reruns
//
// Every response is checked for errors ("errors" in GraphQL, "error" in JSON-RPC) before counting.
import { machine } from './bench-support.ts';
import { startBenchServer } from './bench-server.ts';
import { runLoad } from './load-client.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);

interface Scenario {
  name: string;
  path: string;
  body: string;
  errorMark: string;
}

const gql = (query: string): string => JSON.stringify({ query });

const SCENARIOS: Scenario[] = [
  {
    name: 'JSON-RPC getProtocolStats',
    path: '/v1/rpc',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6' }] }),
    errorMark: '"error":',
  },
  {
    name: 'GraphQL protocolStats',
    path: '/graphql',
    body: gql(
      '{ protocolStats(filters: { protocols: ["jupiter_v6"] }) { protocolName totalTransactions successRate totalFees averageFee totalComputeUnits averageComputeUnits uniquePrograms } }',
    ),
    errorMark: '"errors":',
  },
  {
    name: 'GraphQL transactions(groupBy PROTOCOL, COUNT + P95_FEE)',
    path: '/graphql',
    body: gql('{ transactions(groupBy: [PROTOCOL], metrics: [COUNT, P95_FEE]) { edges { node { protocol count p95Fee } } } }'),
    errorMark: '"errors":',
  },
];

async function main(): Promise<void> {
  const server = await startBenchServer(ROWS);
  const { app, headers } = server;
  const connectionHeaders = await server.connectionHeaders(CONNECTIONS);
  try {
    for (const s of SCENARIOS) {
      const res = await app.inject({ method: 'POST', url: s.path, headers: { 'content-type': 'application/json', ...headers }, payload: s.body });
      if (res.statusCode !== 200 || res.body.includes(s.errorMark)) throw new Error(`${s.name} does not answer: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }
    const load = (s: Scenario, seconds: number) =>
      runLoad({
        url: `${server.baseUrl}${s.path}`,
        connections: CONNECTIONS,
        seconds,
        headers: { 'content-type': 'application/json', ...headers },
        body: s.body,
        countBodiesContaining: s.errorMark,
        connectionHeaders,
      });
    // Warm-up (JIT, caches) so the first timed scenario is not penalised.
    for (const s of SCENARIOS) await load(s, Math.min(2, SECONDS));

    const rows: {
      scenario: string;
      requestsPerSec: number;
      p50Ms: number;
      p99Ms: number;
      errors: number;
      non2xx: number;
      errorBodies: number;
      rpsRatio: number;
      p99Ratio: number;
    }[] = [];
    let base = { rps: 0, p99: 0 };
    for (const s of SCENARIOS) {
      process.stdout.write(`${s.name}: ${SECONDS}s x ${CONNECTIONS} connections...\n`);
      const { result, matched } = await load(s, SECONDS);
      const rps = result.requests.average;
      if (rows.length === 0) base = { rps, p99: result.latency.p99 };
      rows.push({
        scenario: s.name,
        requestsPerSec: Math.round(rps),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors,
        non2xx: result.non2xx,
        errorBodies: matched,
        // Throughput relative to getProtocolStats (higher is better), and p99 as getProtocolStats' p99 over this one (higher is better).
        rpsRatio: Number((rps / base.rps).toFixed(3)),
        p99Ratio: Number((base.p99 / Math.max(result.latency.p99, 1)).toFixed(3)),
      });
    }
    console.table(rows);
    process.stdout.write(
      `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), rows: ROWS, seconds: SECONDS, connections: CONNECTIONS, results: rows })}\n`,
    );
  } finally {
    await server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
