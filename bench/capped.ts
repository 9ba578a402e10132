// The load scenarios of every door (bench/rpc-load.ts: JSON-RPC, REST, GraphQL) twice on
// one store: with the store in memory, and under /work/shared/tools/memcap at a third of
// the store's size (page cache included), so the store is three times the memory, as a
// billion records would be on a server of a few hundred GiB (issue 25). Each figure is a
// ratio to the bare route of its own run; the last column compares the two runs' ratios.
//
//   DATA_DIR=/path/to/store BENCH_ROWS=10000000 npx tsx bench/capped.ts [--cap 1300M] [--memcap path]
//
// memcap needs root and the cgroup v1 memory controller; without it only the first run is made.
import { spawn } from 'node:child_process';
import { execSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, machine } from './bench-support.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('DATA_DIR of a seeded store is required');
const storeBytes = Number(execSync(`du -sb ${JSON.stringify(dataDir)}`, { encoding: 'utf8' }).split('\t')[0]);
const cap = flag('cap', `${Math.floor(storeBytes / 3 / 2 ** 20)}M`);
const memcap = flag('memcap', '/work/shared/tools/memcap');

interface Row { scenario: string; requestsPerSec: number; p50Ms: number; ratioToBare: number; load1: number }

function run(capped: boolean): Promise<{ results: Row[]; load: string } | undefined> {
  const cmd = capped ? [memcap, cap, '--', 'npx', 'tsx', 'bench/rpc-load.ts'] : ['npx', 'tsx', 'bench/rpc-load.ts'];
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      process.stdout.write(c);
    });
    child.on('exit', () => {
      const line = out.trim().split('\n').reverse().find((l) => l.startsWith('{'));
      resolve(line === undefined ? undefined : JSON.parse(line));
    });
  });
}

console.log(`${machine()}\nstore ${(storeBytes / 2 ** 30).toFixed(2)} GiB, cap ${cap}`);
const mem = await run(false);
const capped = await run(true);
if (!mem) throw new Error('the in-memory run gave no result');
const rows = mem.results.map((m) => {
  const c = capped?.results.find((x) => x.scenario === m.scenario);
  return {
    scenario: m.scenario,
    'in memory: req/s': m.requestsPerSec, 'p50 ms': m.p50Ms, 'ratio to bare': m.ratioToBare,
    [`cap ${cap}: req/s`]: c?.requestsPerSec ?? '', 'p50 ms ': c?.p50Ms ?? '', 'ratio to bare ': c?.ratioToBare ?? '',
    'capped ratio / in-memory ratio': c && m.ratioToBare > 0 ? Number((c.ratioToBare / m.ratioToBare).toFixed(2)) : '',
  };
});
console.table(rows);
console.log(JSON.stringify({ date: new Date().toISOString(), storeBytes, cap, loadInMemory: mem.load, loadCapped: capped?.load, rows }));
