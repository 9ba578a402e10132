// Server CPU per answer: the main thread's user+system time (from /proc/self/task/<pid>/stat,
// so the engine's and libuv's threads are left out) over an autocannon run (in a process of
// its own) of the bare constant route and of cached JSON-RPC getProtocolStats, divided by the
// answers given. On a shared machine, req/s swings with other people's load far more than the
// CPU an answer costs, so A/B comparisons of the serving path read this figure beside req/s
// (bench/RESULTS.md, "Serving speed: one pass at the answer edge"). Linux only.
//
//   npx tsx bench/serve-cost.ts                          # this tree
//   TREE=/work/wt-base npx tsx /path/to/bench/serve-cost.ts   # another checkout's server, same measure
import { readFileSync } from 'node:fs';

const TREE = process.env.TREE ?? new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);

interface BenchServerLike {
  baseUrl: string;
  headers: Record<string, string>;
  connectionHeaders(n: number): Promise<Record<string, string>[]>;
  close(): Promise<void>;
}
type Start = (rows: number, configure: (app: { post(url: string, h: () => Promise<unknown>): void }) => void) => Promise<BenchServerLike>;
type RunLoad = (job: Record<string, unknown>) => Promise<{ result: { requests: { average: number; total: number }; non2xx: number } }>;

const { startBenchServer } = (await import(`${TREE}/bench/bench-server.ts`)) as { startBenchServer: Start };
const { runLoad } = (await import(`${TREE}/bench/load-client.ts`)) as { runLoad: RunLoad };

/** CPU time of the main thread so far, in µs (clock ticks of 10 ms). */
function mainThreadMicros(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const server = await startBenchServer(ROWS, (a) => a.post('/bench/constant', async () => ({ jsonrpc: '2.0', id: 1, result: 'ok' })));
const connectionHeaders = await server.connectionHeaders(CONNECTIONS);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{ protocolName: 'jupiter_v6' }] });
const out: Record<string, unknown> = { tree: TREE, load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') };
for (const [name, path] of [
  ['bare', '/bench/constant'],
  ['getProtocolStats', '/v1/rpc'],
] as const) {
  const job = {
    url: `${server.baseUrl}${path}`,
    connections: CONNECTIONS,
    headers: { 'content-type': 'application/json', ...server.headers },
    body,
    connectionHeaders,
  };
  await runLoad({ ...job, seconds: 1 }); // warm-up (and the answer cached)
  const before = mainThreadMicros();
  const { result } = await runLoad({ ...job, seconds: SECONDS });
  const micros = mainThreadMicros() - before;
  out[name] = {
    requestsPerSec: Math.round(result.requests.average),
    mainThreadMicrosPerAnswer: Math.round(micros / result.requests.total),
    non2xx: result.non2xx,
  };
}
console.log(JSON.stringify(out));
await server.close();
process.exit(0);
