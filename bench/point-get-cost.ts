// Where a getTransaction's time goes at 50 connections (issue 25), on a seeded store: the
// bare constant route and JSON-RPC getTransaction (random known signatures) back to back on
// one server, each with req/s, the main thread's CPU per answer (JSON-RPC handling, param
// checks, the answer edge, the lookup's JS), the rest of the process's CPU per answer (the
// engine's threads: query parse, per-query floor, granule reads), and the load client's CPU
// per answer (it shares the 2 cores). With PROFILE=1 it also prints the main thread's
// hottest functions during the getTransaction phase only (node:inspector).
//
//   DATA_DIR=/path/to/store npx tsx bench/point-get-cost.ts
//   TREE=/work/main DATA_DIR=... npx tsx /path/to/bench/point-get-cost.ts   # another checkout's server
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=50 PROFILE=1 ...
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';

const TREE = process.env.TREE ?? new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
if (!process.env.DATA_DIR) throw new Error('DATA_DIR of a seeded store is required');

interface BenchServerLike {
  baseUrl: string;
  headers: Record<string, string>;
  services: { wh: { query<T>(sql: string, o?: unknown): Promise<T[]> } };
  connectionHeaders(n: number): Promise<Record<string, string>[]>;
  close(): Promise<void>;
}
type Start = (rows: number, configure: (app: { post(url: string, h: () => Promise<unknown>): void }) => void) => Promise<BenchServerLike>;
type RunLoad = (
  job: Record<string, unknown>,
) => Promise<{ result: { requests: { average: number; total: number }; latency: { p50: number }; non2xx: number }; matched: number }>;

const { startBenchServer } = (await import(`${TREE}/bench/bench-server.ts`)) as { startBenchServer: Start };
const { runLoad } = (await import(`${TREE}/bench/load-client.ts`)) as { runLoad: RunLoad };

const ticks = (stat: string): number => {
  const f = stat.split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000; // µs
};
const mainMicros = (): number => ticks(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'));
const processMicros = (): number => ticks(readFileSync('/proc/self/stat', 'utf8'));
/** CPU of every process on the machine but this one (the load client, and other people's work). */
const machineMicros = (): number => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) * 10_000;
};

const server = await startBenchServer(0, (a) => a.post('/bench/constant', async () => ({ jsonrpc: '2.0', id: 1, result: 'ok' })));
const connectionHeaders = await server.connectionHeaders(CONNECTIONS);
const sigs = (
  await server.services.wh.query<{ s: string }>("SELECT signature AS s FROM transactions ORDER BY cityHash64(signature, 'bench') LIMIT 100000")
).map((r) => r.s);
const bodies = Array.from({ length: 100_000 }, () =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [sigs[Math.floor(Math.random() * sigs.length)]] }),
);
const out: Record<string, unknown> = {
  tree: TREE,
  date: new Date().toISOString(),
  load: loadavg()
    .map((x) => x.toFixed(2))
    .join(' '),
};
const headers = { 'content-type': 'application/json', ...server.headers };
for (const [name, job] of [
  ['bare', { url: `${server.baseUrl}/bench/constant`, body: '{}' }],
  ['getTransaction', { url: `${server.baseUrl}/v1/rpc`, bodies, countBodiesContaining: '"error":' }],
] as const) {
  const base = { connections: CONNECTIONS, headers, connectionHeaders, ...job };
  await runLoad({ ...base, seconds: 2 }); // warm-up
  const profile = process.env.PROFILE === '1' && name === 'getTransaction' ? new Session() : undefined;
  if (profile) {
    profile.connect();
    await profile.post('Profiler.enable');
    await profile.post('Profiler.start');
  }
  const m0 = mainMicros();
  const p0 = processMicros();
  const all0 = machineMicros();
  const { result, matched } = await runLoad({ ...base, seconds: SECONDS });
  const n = result.requests.total;
  const main = mainMicros() - m0;
  const proc = processMicros() - p0;
  const others = machineMicros() - all0 - proc;
  out[name] = {
    requestsPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    errors: result.non2xx + matched,
    mainThreadMicrosPerAnswer: Math.round(main / n),
    engineAndOtherThreadsMicrosPerAnswer: Math.round((proc - main) / n),
    otherProcessesMicrosPerAnswer: Math.round(others / n),
    load1: Number(loadavg()[0]!.toFixed(1)),
  };
  if (profile) {
    const { profile: p } = (await profile.post('Profiler.stop')) as unknown as {
      profile: {
        nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
        samples: number[];
        timeDeltas: number[];
      };
    };
    const byId = new Map(p.nodes.map((x) => [x.id, x]));
    const parent = new Map<number, number>();
    for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
    const label = (id: number): string => {
      const f = byId.get(id)!.callFrame;
      return `${f.functionName || '(anon)'} ${f.url.replace(/.*node_modules\//, '').replace(/.*\/(api|warehouse|core|bench)\//, '$1/')}:${f.lineNumber}`;
    };
    const self = new Map<string, number>();
    const incl = new Map<string, number>();
    let total = 0;
    p.samples.forEach((id, i) => {
      const t = p.timeDeltas[i] ?? 0;
      total += t;
      self.set(label(id), (self.get(label(id)) ?? 0) + t);
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const k = label(cur);
        if (!seen.has(k)) {
          seen.add(k);
          incl.set(k, (incl.get(k) ?? 0) + t);
        }
      }
    });
    const top = (m: Map<string, number>, k: number): string[] =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, k)
        .map(([s, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}% ${s}`);
    console.log(`main thread, getTransaction phase, self:\n${top(self, 30).join('\n')}`);
    console.log(`inclusive:\n${top(incl, 60).join('\n')}`);
    profile.disconnect();
  }
}
const bare = out.bare as { requestsPerSec: number };
const gt = out.getTransaction as { requestsPerSec: number };
out.ratio = Number((gt.requestsPerSec / bare.requestsPerSec).toFixed(3));
console.log(JSON.stringify(out));
await server.close();
process.exit(0);
