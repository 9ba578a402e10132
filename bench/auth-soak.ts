// Memory under sustained load from many keys (issue 5): the API process serves a cached
// endpoint to autocannon for --minutes (default 10), each request carrying one of --keys
// (default 1000) distinct free-plan API keys, on the real limiter clock (so keys also run
// into their 100/min limit and get 429s, as real clients would). RSS and heap are sampled
// every --every seconds (after a GC when --expose-gc is on); flat means the last samples
// stay near the first ones after warm-up.
//   node --expose-gc --import tsx bench/auth-soak.ts [--minutes 10] [--keys 1000] [--connections 50]
import { parseArgs } from 'node:util';
import autocannon, { type Request as AcRequest } from 'autocannon';
import { machine } from './bench-support.ts';
import { startBenchServer } from './bench-server.ts';

const { values } = parseArgs({
  options: { minutes: { type: 'string' }, keys: { type: 'string' }, connections: { type: 'string' }, every: { type: 'string' } },
});
const minutes = Number(values.minutes ?? 10);
const keyCount = Number(values.keys ?? 1000);
const connections = Number(values.connections ?? 50);
const everySeconds = Number(values.every ?? 30);

process.env.RATE_LIMIT_CLOCK = 'real';
const server = await startBenchServer(200_000);
const adminToken = server.services.config.adminToken;
const keys: string[] = [];
for (let i = 0; i < keyCount; i++) {
  const res = await server.app.inject({
    method: 'POST',
    url: '/admin/keys',
    headers: { authorization: `Bearer ${adminToken}` },
    payload: { name: `soak-${i}`, plan: 'free' },
  });
  keys.push((res.json() as { key: string }).key);
}
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6' }] });
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (b: number) => Math.round(b / 1024 / 1024);
const samples: { minute: number; rssMb: number; heapMb: number }[] = [];
const t0 = Date.now();
const sample = (): void => {
  gc?.();
  const m = process.memoryUsage();
  samples.push({ minute: Number(((Date.now() - t0) / 60_000).toFixed(1)), rssMb: mb(m.rss), heapMb: mb(m.heapUsed) });
  process.stderr.write(`${JSON.stringify(samples.at(-1))}\n`);
};
sample();
const timer = setInterval(sample, everySeconds * 1000);
let n = 0;
const result = await autocannon({
  url: `${server.baseUrl}/v1/rpc`,
  method: 'POST',
  connections,
  duration: minutes * 60,
  headers: { 'content-type': 'application/json' },
  body,
  requests: [{ setupRequest: (req: AcRequest) => ({ ...req, headers: { ...req.headers, 'x-api-key': keys[n++ % keys.length]! } }) }],
});
clearInterval(timer);
sample();
const status = result.statusCodeStats as Record<string, { count: number }> | undefined;
const report = {
  date: new Date().toISOString(),
  machine: machine(),
  minutes,
  keys: keyCount,
  connections,
  requests: result.requests.total,
  requestsPerSec: Math.round(result.requests.average),
  statusCounts: Object.fromEntries(Object.entries(status ?? {}).map(([k, v]) => [k, v.count])),
  gcBeforeSamples: gc !== undefined,
  samples,
};
console.log(JSON.stringify(report));
await server.close();
