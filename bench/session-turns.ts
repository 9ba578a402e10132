// What running one chDB session's statements in turn (warehouse/session-turns.ts) costs: the
// same statements sent at once straight to a chDB session (the engine's own figure) and
// through EmbeddedWarehouse, which runs them one after another. Ratio = engine ms / transport ms.
// Run: npx tsx bench/session-turns.ts [statements at once] [rounds]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';

const AT_ONCE = Number(process.argv[2] ?? 4);
const ROUNDS = Number(process.argv[3] ?? 5);
const SQL = process.env.BENCH_SQL ?? 'SELECT sum(cityHash64(number)) AS h FROM numbers(20000000)';

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return performance.now() - t;
}

const rawDir = mkdtempSync(path.join(tmpdir(), 'bench-turns-raw-'));
const raw = new Session(rawDir);
const engine: number[] = [];
await raw.queryAsync(SQL, { format: 'TSV' });
for (let r = 0; r < ROUNDS; r++) engine.push(await timed(() => Promise.all(Array.from({ length: AT_ONCE }, () => raw.queryAsync(SQL, { format: 'TSV' })))));
raw.close();

const whDir = mkdtempSync(path.join(tmpdir(), 'bench-turns-wh-'));
const wh = new EmbeddedWarehouse(whDir);
const transport: number[] = [];
await wh.queryText(SQL, 'TSV');
for (let r = 0; r < ROUNDS; r++) transport.push(await timed(() => Promise.all(Array.from({ length: AT_ONCE }, () => wh.queryText(SQL, 'TSV')))));
await wh.close();
for (const d of [rawDir, whDir]) rmSync(d, { recursive: true, force: true });

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    atOnce: AT_ONCE,
    rounds: ROUNDS,
    engineMs: median(engine),
    transportMs: median(transport),
    ratio: +(median(engine) / median(transport)).toFixed(2),
  }),
);
