// Capped against in memory, in one run (issue 37). bench/capped.ts runs the in-memory server,
// then the capped one, minutes apart: on this shared machine the load changed between the two,
// and the bare route's rate with it (3.2x between the two runs of "The index built"), so the
// ratio of their ratios said more about the other sessions than about the cap. Here both
// servers are up at once, each over its own copy of the store (one data directory per engine
// process), the capped one under memcap, and they are measured in turns: each round runs, for
// each scenario, on each server, the bare route and the scenario back to back (the order of
// servers and of bare/scenario alternating by round), so every ratio has a bare route measured
// within seconds of it, and every capped ratio an in-memory one within a minute.
//
//   DATA_DIR=bench/tmp/rid10m npx tsx bench/capped-paired.ts [--capped-dir DIR] [--cap 900M]
//       [--rounds 5] [--seconds 5] [--warmup 30]
//   BENCH_ONLY='getTransaction,getTransactionsForAddress' selects the scenarios (rpc-load.ts names).
//
// The capped copy (default DATA_DIR + '-capped') is made with cp -a when absent. memcap drops
// the machine's page cache when it starts (so does any other session's memcap): the in-memory
// copy is read through (cat) before each of its turns, so it is in memory when measured.
// The cap defaults to a third of the store plus the peak memory of the in-memory server and
// of a load client after its warm-up (the issue's "a third of the store plus the processes'
// own memory"; bench/capped.ts --headroom measured), so the store itself gets a third.
import { spawn, execSync, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { flag, machine, median } from './bench-support.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const memDir = process.env.DATA_DIR;
if (!memDir) throw new Error('DATA_DIR of a seeded store is required');
const cappedDir = flag('capped-dir', `${memDir.replace(/\/$/, '')}-capped`);
const rounds = Number(flag('rounds', '5'));
const seconds = Number(flag('seconds', '5'));
const warmup = Number(flag('warmup', '30'));
const memcap = flag('memcap', '/work/shared/tools/memcap');
const only = process.env.BENCH_ONLY ?? 'getTransaction random,getTransactionsForAddress';

if (!existsSync(cappedDir)) {
  console.log(`copying ${memDir} to ${cappedDir}...`);
  execSync(`cp -a ${JSON.stringify(memDir)} ${JSON.stringify(cappedDir)}`);
}
const storeBytes = Number(execSync(`du -sb ${JSON.stringify(cappedDir)}`, { encoding: 'utf8' }).split('\t')[0]);

interface Row {
  scenario: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  rpcErrors: number;
  load1: number;
  serverMaxRssBytes: number;
  clientMaxRssBytes: number;
}

/** A scenario server (rpc-load.ts with BENCH_SERVE=1) and a way to ask it for one run. */
class Server {
  private readonly answers: ((line: string) => void)[] = [];
  readonly ready: Promise<string[]>;

  constructor(
    readonly name: string,
    private readonly child: ChildProcessByStdio<Writable, Readable, null>,
  ) {
    const lines = createInterface({ input: child.stdout });
    this.ready = new Promise((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`${name} server exited with ${code}`)));
      lines.on('line', (line) => {
        if (!line.startsWith('@@')) return void process.stdout.write(`[${name}] ${line}\n`);
        const msg = JSON.parse(line.slice(2)) as { ready?: string[] };
        if (msg.ready) resolve(msg.ready);
        else this.answers.shift()?.(line.slice(2));
      });
    });
  }

  run(scenario: string, secs: number): Promise<Row> {
    return new Promise((resolve, reject) => {
      this.answers.push((text) => {
        const row = JSON.parse(text) as Row & { error?: string };
        if (row.error) reject(new Error(row.error));
        else resolve(row);
      });
      this.child.stdin.write(`${JSON.stringify({ scenario, seconds: secs })}\n`);
    });
  }

  quit(): Promise<void> {
    return new Promise((resolve) => {
      this.child.on('exit', () => resolve());
      this.child.stdin.write(`${JSON.stringify({ quit: true })}\n`);
    });
  }
}

function start(name: string, dir: string, cap?: string): Server {
  // node itself rather than npx, whose own process would count against the cap.
  const load = [process.execPath, '--import', 'tsx', 'bench/rpc-load.ts'];
  const cmd = cap !== undefined ? [memcap, cap, '--', ...load] : load;
  const env = { ...process.env, DATA_DIR: dir, BENCH_SERVE: '1', BENCH_KEYS: 'granules', BENCH_ONLY: only, BENCH_ROWS: '0' };
  const child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Server(name, child);
}

/** Read the in-memory copy through, so its turn finds it in memory whatever dropped the cache. */
const inMemory = (): void => void execSync(`find ${JSON.stringify(memDir)} -type f -exec cat {} + > /dev/null`);

console.log(machine());
console.log(`store ${(storeBytes / 2 ** 30).toFixed(2)} GiB; ${rounds} rounds of ${seconds} s slices; scenarios ${only}`);
// The in-memory server first, warmed (JIT, its memory at its working size), to size the cap.
inMemory();
const mem = start('in memory', memDir);
const scenarios = (await mem.ready).slice(1);
let processes = 0;
for (const s of scenarios) {
  const row = await mem.run(s, seconds);
  processes = Math.max(processes, row.serverMaxRssBytes + row.clientMaxRssBytes);
}
const cap = flag('cap', `${Math.floor((storeBytes / 3 + processes) / 2 ** 20)}M`);
console.log(`cap ${cap} (a third of the store + ${Math.floor(processes / 2 ** 20)}M, the in-memory server's and a load client's peaks)`);
// memcap drops the page cache as it starts; the in-memory copy is read back before each of its turns.
const capped = start('capped', cappedDir, cap);
await capped.ready;
const BARE = 'bare';
const loads: number[] = [loadavg()[0]!];

// Untimed: the capped server's cache reaches its steady state for each scenario, and its JIT warms.
for (const s of scenarios) {
  console.log(`warm-up: ${s}, capped ${warmup} s`);
  await capped.run(s, warmup);
}

interface Measure {
  round: number;
  server: string;
  scenario: string;
  bare: number;
  rps: number;
  ratio: number;
  p50Ms: number;
  load1: number;
}
const measures: Measure[] = [];
for (let round = 0; round < rounds; round++) {
  for (const s of scenarios) {
    for (const server of round % 2 === 0 ? [mem, capped] : [capped, mem]) {
      if (server === mem) inMemory();
      const first = round % 2 === 0 ? BARE : s;
      const a = await server.run(first, seconds);
      const b = await server.run(first === BARE ? s : BARE, seconds);
      const [bare, row] = first === BARE ? [a, b] : [b, a];
      const m = {
        round,
        server: server.name,
        scenario: s,
        bare: bare.requestsPerSec,
        rps: row.requestsPerSec,
        ratio: Number((row.requestsPerSec / Math.max(1, bare.requestsPerSec)).toFixed(4)),
        p50Ms: row.p50Ms,
        load1: row.load1,
      };
      measures.push(m);
      loads.push(loadavg()[0]!);
      console.log(JSON.stringify(m));
    }
  }
}
await Promise.all([mem.quit(), capped.quit()]);

const summary = scenarios.map((s) => {
  const of = (server: Server) => measures.filter((m) => m.scenario === s && m.server === server.name);
  const paired = [...Array(rounds).keys()].map((r) => [of(capped).find((m) => m.round === r)!, of(mem).find((m) => m.round === r)!] as const);
  const pairs = paired.map(([c, i]) => c.ratio / Math.max(1e-9, i.ratio));
  // The scenario's own rates, capped over in memory, a minute apart: free of the bare route's swings.
  const rates = paired.map(([c, i]) => c.rps / Math.max(1, i.rps));
  const spread = (xs: number[]) => ({
    median: Number(median(xs).toFixed(3)),
    min: Number(Math.min(...xs).toFixed(3)),
    max: Number(Math.max(...xs).toFixed(3)),
  });
  const side = (server: Server) => ({
    bareMedian: median(of(server).map((m) => m.bare)),
    rpsMedian: median(of(server).map((m) => m.rps)),
    p50Median: median(of(server).map((m) => m.p50Ms)),
    ratioMedian: Number(median(of(server).map((m) => m.ratio)).toFixed(4)),
    ratios: of(server).map((m) => m.ratio),
  });
  return {
    scenario: s,
    inMemory: side(mem),
    capped: side(capped),
    cappedOverInMemory: spread(pairs),
    cappedOverInMemoryRequestsPerSec: spread(rates),
  };
});
console.table(
  summary.map((x) => ({
    scenario: x.scenario,
    'in memory: ratio (median)': x.inMemory.ratioMedian,
    'req/s': x.inMemory.rpsMedian,
    'bare req/s': x.inMemory.bareMedian,
    'capped: ratio (median)': x.capped.ratioMedian,
    'req/s ': x.capped.rpsMedian,
    'bare req/s ': x.capped.bareMedian,
    'capped/in memory, by round: median': x.cappedOverInMemory.median,
    min: x.cappedOverInMemory.min,
    max: x.cappedOverInMemory.max,
    'capped/in memory req/s, by round: median': x.cappedOverInMemoryRequestsPerSec.median,
  })),
);
console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    storeBytes,
    cap,
    processesBytes: processes,
    rounds,
    seconds,
    warmupSeconds: warmup,
    load: { min: Math.min(...loads), max: Math.max(...loads) },
    summary,
    measures,
  }),
);
