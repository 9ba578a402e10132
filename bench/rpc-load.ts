// Load test of POST /v1/rpc over loopback with autocannon: 50 connections, 20 s per
// scenario by default. A bare Fastify route answering a constant runs in the same process
// and the same run, so each method's throughput is also given as a ratio of that ceiling
// (HTTP + JSON overhead only), which makes numbers comparable across machines.
//
//   npx tsx bench/rpc-load.ts                      # 200k demo rows, 20 s per scenario
//   BENCH_SECONDS=3 BENCH_ROWS=50000 npx tsx bench/rpc-load.ts   # quick smoke run
//
// Scenarios: getProtocolStats over the full range, getProtocolActivity for one day hourly,
// getTransaction for random known signatures, getTransactionsForAddress for the hottest
// address with limit 100. Every response is checked for a JSON-RPC error before counting.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon, { type Request as AcRequest, type Result } from 'autocannon';
import { buildApp } from '../api/app.ts';
import { createServices } from '../api/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { insertDemoRows } from '../ingest/demo-generator.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const START = 1_735_689_600; // 2025-01-01T00:00:00Z
const DAYS = 7;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

const body = (method: string, params: unknown[]): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

interface Scenario {
  name: string;
  path: string;
  /** A fixed body, or a function giving each request its own body. */
  body: string | (() => string);
}

interface Row {
  scenario: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  rpcErrors: number;
  ratioToBare: number;
}

async function run(url: string, headers: Record<string, string>, s: Scenario, seconds = SECONDS): Promise<{ result: Result; rpcErrors: number }> {
  let rpcErrors = 0;
  const result = await autocannon({
    url: `${url}${s.path}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...headers },
    ...(typeof s.body === 'string'
      ? { body: s.body }
      : { requests: [{ setupRequest: (req: AcRequest) => ({ ...req, body: (s.body as () => string)() }) }] }),
    // A JSON-RPC error still comes back as HTTP 200, so count them from the bodies.
    setupClient: (client) => {
      client.on('body', (buf: Buffer) => {
        if (buf.includes('"error":')) rpcErrors += 1;
      });
    },
  });
  return { result, rpcErrors };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_ROWS: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent' });
  const services = await createServices(config, createLogger('silent'));
  try {
    process.stdout.write(`seeding ${ROWS} demo rows over ${DAYS} days...\n`);
    await insertDemoRows(services.wh, { seed: 42, total: ROWS, offset: 0, count: ROWS, startTime: START, endTime: START + DAYS * 86_400 });
    services.dataVersion.bump();

    const sigs = (await services.wh.query<{ s: string }>(
      `SELECT signature AS s FROM transactions WHERE protocol_name IN {p:Array(String)} ORDER BY cityHash64(signature) LIMIT 2000`,
      { params: { p: await services.analytics.protocols() } })).map((r) => r.s);
    const [hot] = await services.wh.query<{ a: string }>(
      'SELECT arrayJoin(accounts) AS a, count() AS c FROM transactions GROUP BY a ORDER BY c DESC LIMIT 1');

    const app = await buildApp(services);
    // The ceiling: same server, same framework, no analytics.
    app.post('/bench/constant', async () => ({ jsonrpc: '2.0', id: 1, result: 'ok' }));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });

    // Once API keys exist (DESIGN: POST /admin/keys), benchmark with an enterprise key.
    const headers: Record<string, string> = {};
    const keyRes = await app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'bench', plan: 'enterprise' } });
    if (keyRes.statusCode === 201) headers['x-api-key'] = (keyRes.json() as { key: string }).key;

    const day = START + 2 * 86_400;
    const scenarios: Scenario[] = [
      { name: 'bare constant route', path: '/bench/constant', body: '{}' },
      { name: 'getProtocolStats full range', path: '/v1/rpc', body: body('getProtocolStats', [{ protocolName: 'jupiter_v6' }]) },
      { name: 'getProtocolActivity one day hourly', path: '/v1/rpc', body: body('getProtocolActivity', [{ protocolName: 'pump_fun', blockTime: { gte: day, lte: day + 86_399 } }]) },
      { name: 'getTransaction random known signature', path: '/v1/rpc', body: () => body('getTransaction', [sigs[Math.floor(Math.random() * sigs.length)]]) },
      { name: 'getTransactionsForAddress hot address limit 100', path: '/v1/rpc', body: body('getTransactionsForAddress', [hot?.a, { limit: 100 }]) },
    ];

    // Each scenario must answer correctly before it is timed.
    for (const s of scenarios.slice(1)) {
      const res = await app.inject({ method: 'POST', url: s.path, headers: { 'content-type': 'application/json', ...headers }, payload: typeof s.body === 'string' ? s.body : s.body() });
      if (res.statusCode !== 200 || res.body.includes('"error":')) throw new Error(`${s.name} does not answer: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }

    // Warm up the server (JIT, connection pools) so the first timed scenario is not penalised.
    await run(url, headers, scenarios[0]!, Math.min(2, SECONDS));

    const rows: Row[] = [];
    let bare = 0;
    for (const s of scenarios) {
      process.stdout.write(`${s.name}: ${SECONDS}s x ${CONNECTIONS} connections...\n`);
      const { result, rpcErrors } = await run(url, headers, s);
      const rps = result.requests.average;
      if (rows.length === 0) bare = rps;
      rows.push({
        scenario: s.name,
        requestsPerSec: Math.round(rps),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors,
        non2xx: result.non2xx,
        rpcErrors,
        ratioToBare: bare === 0 ? 0 : Number((rps / bare).toFixed(3)),
      });
    }
    await app.close();
    console.table(rows);
    process.stdout.write(`${JSON.stringify({ rows: ROWS, seconds: SECONDS, connections: CONNECTIONS, transport: services.wh.transport, results: rows })}\n`);
  } finally {
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
