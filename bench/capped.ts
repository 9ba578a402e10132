// The load scenarios of every door (bench/rpc-load.ts: JSON-RPC, REST, GraphQL) twice on
// one store: with the store in memory, and under /work/shared/tools/memcap at a third of
// the store's size (page cache included), so the store is three times the memory, as a
// billion records would be on a server of a few hundred GiB (issue 25). Each figure is a
// ratio to the bare route of its own run; the last column compares the two runs' ratios.
//
//   DATA_DIR=/path/to/store BENCH_ROWS=10000000 npx tsx bench/capped.ts [--cap 1300M] [--memcap path]
//   ... bench/capped.ts --headroom measured   # a small store (bench:quick): the cap is a third of the store
//       plus the peak memory the in-memory run's server and load client took, so the store still gets a third
//
// By default the cap is a third of the store for everything, processes included (the stricter
// model, right when the store dwarfs the processes, as at 10M and above).
//
// Steady state, not a cold start (bench/RESULTS.md, "Past memory in steady state"): memcap drops
// the page cache, which then fills at the disk's pace, minutes for tens of GB, so each scenario
// first runs untimed for --warmup seconds (default 60; BENCH_WARMUP of rpc-load.ts), in both
// runs. The point reads ask for one record of every granule of the point table (--keys
// granules, BENCH_KEYS): a fixed sample of 100,000 (--keys sample) is ~1.3 GB of granules at
// 100M, which a warmed cache holds entirely, so it would not model a store past memory.
// memcap needs root and the cgroup v1 memory controller; without it only the first run is made.
import { spawn } from 'node:child_process';
import { execSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, machine } from './bench-support.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('DATA_DIR of a seeded store is required');
const headroom = flag('headroom', 'none');
if (headroom !== 'none' && headroom !== 'measured') throw new Error('--headroom is none or measured');
const memcap = flag('memcap', '/work/shared/tools/memcap');
const mib = (bytes: number): string => `${Math.floor(bytes / 2 ** 20)}M`;
const warmup = flag('warmup', '60');
const keys = flag('keys', 'granules');
if (!/^\d+$/.test(warmup)) throw new Error('--warmup is a whole number of seconds');
if (keys !== 'sample' && keys !== 'granules') throw new Error('--keys is sample or granules');
const env = { ...process.env, BENCH_WARMUP: warmup, BENCH_KEYS: keys };

interface Row {
  scenario: string;
  requestsPerSec: number;
  p50Ms: number;
  ratioToBare: number;
  load1: number;
}
interface Run {
  results: Row[];
  load: string;
  serverMaxRssBytes?: number;
  clientMaxRssBytes?: number;
}

// node itself rather than npx, whose own process would count against the cap.
const LOAD = [process.execPath, '--import', 'tsx', 'bench/rpc-load.ts'];

function run(cap: string | null): Promise<Run | undefined> {
  const cmd = cap !== null ? [memcap, cap, '--', ...LOAD] : LOAD;
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      process.stdout.write(c);
    });
    child.on('exit', () => {
      const line = out
        .trim()
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('{'));
      resolve(line === undefined ? undefined : JSON.parse(line));
    });
  });
}

console.log(machine());
// The in-memory run seeds an empty store (BENCH_ROWS), so the store is measured after it.
const mem = await run(null);
if (!mem) throw new Error('the in-memory run gave no result');
const storeBytes = Number(execSync(`du -sb ${JSON.stringify(dataDir)}`, { encoding: 'utf8' }).split('\t')[0]);
const processes = headroom === 'measured' ? (mem.serverMaxRssBytes ?? 0) + (mem.clientMaxRssBytes ?? 0) : 0;
const cap = flag('cap', mib(storeBytes / 3 + processes));
console.log(
  `store ${(storeBytes / 2 ** 30).toFixed(2)} GiB, cap ${cap}${processes > 0 ? ` (a third of the store + ${mib(processes)} the in-memory run's processes peaked at)` : ''}`,
);
const capped = await run(cap);
const rows = mem.results.map((m) => {
  const c = capped?.results.find((x) => x.scenario === m.scenario);
  return {
    scenario: m.scenario,
    'in memory: req/s': m.requestsPerSec,
    'p50 ms': m.p50Ms,
    'ratio to bare': m.ratioToBare,
    [`cap ${cap}: req/s`]: c?.requestsPerSec ?? '',
    'p50 ms ': c?.p50Ms ?? '',
    'ratio to bare ': c?.ratioToBare ?? '',
    'capped ratio / in-memory ratio': c && m.ratioToBare > 0 ? Number((c.ratioToBare / m.ratioToBare).toFixed(2)) : '',
  };
});
console.table(rows);
console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    storeBytes,
    cap,
    warmupSeconds: Number(warmup),
    keys,
    loadInMemory: mem.load,
    loadCapped: capped?.load,
    rows,
  }),
);
