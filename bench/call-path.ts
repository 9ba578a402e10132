// The files one call passes through, as the running program shows them: V8's precise
// coverage (call counts per function, reset at each take) around one warmed-up call of
// JSON-RPC getProtocolStats and of GraphQL transactions(groupBy, metrics), counting the
// project's files in which any function ran. Access hooks (key check, rate limit, usage)
// and the answer edge's (api/services/answers/: the one onSend pass, caching and compression headers)
// are listed apart from the call's own path. `npx tsx bench/call-path.ts`.
import { Session } from 'node:inspector/promises';
import { startBenchServer } from './bench-server.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** Project files (not tests, not bench) in which a function ran since the last take. */
async function ranFiles(): Promise<string[]> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith(`file://${ROOT}`)) continue;
    const file = script.url.slice(`file://${ROOT}`.length);
    if (/^(test|bench|node_modules)\//.test(file)) continue;
    if (script.functions.some((f) => f.ranges[0]!.count > 0 && f.functionName !== '')) files.add(file);
  }
  return [...files].sort();
}

const server = await startBenchServer(20_000);
const t = { app: server.app, services: server.services };
const headers = { ...server.headers, 'content-type': 'application/json' };
const calls: Record<string, () => Promise<{ statusCode: number; body: string }>> = {
  'JSON-RPC getProtocolStats': () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers,
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6', blockTime: { gte: 1 } }] },
    }),
  'GraphQL transactions(groupBy, metrics)': () =>
    t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers,
      payload: {
        query: `{ transactions(groupBy: [PROTOCOL], metrics: [COUNT, AVG_FEE], filters: {dateRange: {start: "2020-01-01"}}) { edges { node { protocolName } } } } #${Math.random()}`,
      },
    }),
};
const ACCESS = /^api\/services\/(access|answers|freshness)\b|^api\/server\/app\b|^core\/(logger|budget)\.ts$/;
for (const [name, call] of Object.entries(calls)) {
  for (let i = 0; i < 3; i++) await call();
  t.services.operatorAnalytics.invalidate(); // the measured call reaches the engine, not the result cache
  await ranFiles();
  const t0 = Date.now();
  const res = await call();
  const ran = await ranFiles();
  // What runs anyway in the same time (timers of live streams, caches, freshness) is not the call's.
  await new Promise((r) => setTimeout(r, Date.now() - t0));
  const idle = new Set(await ranFiles());
  const files = ran.filter((f) => !idle.has(f));
  const own = files.filter((f) => !ACCESS.test(f));
  console.log(`\n${name}: HTTP ${res.statusCode}; ${own.length} files on its own path (+${files.length - own.length} access/edge files)`);
  console.log(`  path: ${own.join(', ')}`);
  console.log(`  edge: ${files.filter((f) => ACCESS.test(f)).join(', ')}`);
  console.log(`  answer: ${res.body.slice(0, 160)}`);
}
await server.close();
