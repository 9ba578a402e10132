// What running a chDB session's statements in turn (warehouse/session-turns.ts) costs, and what
// a pool of serving sessions (warehouse/session-pool.ts) gives back: the same statements sent at
// once straight to one chDB session (the engine's own figure), through EmbeddedWarehouse on one
// session (one after another) and on its pool (SERVING_SESSIONS, or BENCH_POOL). Ratio = engine
// ms / transport ms (1.0 = no cost). With BENCH_BOUND=1 the statement has a bound parameter
// (chDB runs a process's bound statements one at a time, whatever the session).
// Also: how long a quick `SELECT 1` sent just after one slow statement takes, on one session and
// on the pool (head-of-line blocking).
// Run: npx tsx bench/session-turns.ts [statements at once] [rounds]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { SERVING_SESSIONS } from '../core/limits/warehouse.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';

const AT_ONCE = Number(process.argv[2] ?? 4);
const ROUNDS = Number(process.argv[3] ?? 5);
const POOL = Number(process.env.BENCH_POOL ?? SERVING_SESSIONS);
const BOUND = process.env.BENCH_BOUND === '1';
const SQL =
  process.env.BENCH_SQL ??
  (BOUND ? 'SELECT sum(cityHash64(number)) AS h FROM numbers({n:UInt64})' : 'SELECT sum(cityHash64(number)) AS h FROM numbers(20000000)');
const PARAMS = BOUND ? { n: 20_000_000 } : undefined;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return performance.now() - t;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rounds(one: () => Promise<unknown>): Promise<number> {
  await one();
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) ms.push(await timed(() => Promise.all(Array.from({ length: AT_ONCE }, one))));
  return median(ms);
}

const dirs: string[] = [];
const dir = (name: string): string => {
  const d = mkdtempSync(path.join(tmpdir(), `bench-turns-${name}-`));
  dirs.push(d);
  return d;
};

const raw = new Session(dir('raw'));
const engineMs = await rounds(() => (PARAMS ? raw.queryBindAsync(SQL, PARAMS, { format: 'TSV' }) : raw.queryAsync(SQL, { format: 'TSV' })));
raw.close();

/** Head-of-line blocking: how long a quick statement sent just after a slow one takes (median). */
async function quickBehindSlow(wh: EmbeddedWarehouse): Promise<number> {
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const slow = wh.queryText(SQL, 'TSV', { params: PARAMS });
    ms.push(await timed(() => wh.queryText('SELECT 1', 'TSV')));
    await slow;
  }
  return median(ms);
}

const through = async (sessions: number): Promise<[number, number]> => {
  const wh = new EmbeddedWarehouse(dir(`wh${sessions}`), { sessions });
  try {
    return [await rounds(() => wh.queryText(SQL, 'TSV', { params: PARAMS })), await quickBehindSlow(wh)];
  } finally {
    await wh.close();
  }
};
const [oneSessionMs, oneSessionQuickMs] = await through(1);
const [poolMs, poolQuickMs] = await through(POOL);
for (const d of dirs) rmSync(d, { recursive: true, force: true });

const ratio = (ms: number): number => +(engineMs / ms).toFixed(2);
console.log(
  JSON.stringify({
    atOnce: AT_ONCE,
    rounds: ROUNDS,
    bound: BOUND,
    pool: POOL,
    engineMs: Math.round(engineMs),
    oneSessionMs: Math.round(oneSessionMs),
    poolMs: Math.round(poolMs),
    oneSessionRatio: ratio(oneSessionMs),
    poolRatio: ratio(poolMs),
    quickBehindSlowMs: { oneSession: +oneSessionQuickMs.toFixed(1), pool: +poolQuickMs.toFixed(1) },
  }),
);
