// Where an engine-path body's time goes, statement by statement (issue 40): today's
// `IngestPipeline.ingestNdjson` with checks in the engine, its warehouse wrapped so that each
// statement's wall time is kept under a short name, against the engine's own insert of the same
// bytes in the same round. Bodies of several sizes show the fixed cost a body pays whatever its
// size (Kafka batches are 1-5k records; a POST body up to the limit).
//   DATA_DIR=<store> npx tsx bench/ingest-statements.ts [--rows 1000000] [--sizes 1000,4000,40000] [--rounds 5] [--timeline]
import { parseArgs } from 'node:util';
import { createLogger } from '../core/logger.ts';
import { IngestPipeline } from '../ingest/pipeline.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { startBenchServer } from './bench-server.ts';
import { machine, median, timeMs } from './bench-support.ts';
import { benchPipelineOptions, engineInsert, freshBodies, warmPipeline } from './ingest-support.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' }, sizes: { type: 'string' }, rounds: { type: 'string' }, timeline: { type: 'boolean' } } });
const say = (s: string): void => void process.stdout.write(`${s}\n`);

/** A statement's short name: its verb and the table it writes or reads first. */
function nameOf(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  const m = /^(INSERT INTO \w+|ALTER TABLE \w+ DELETE|SELECT .*? FROM (\w+))/.exec(s);
  if (s.includes('system.tables')) return 'SELECT system.tables (the checks view, once)';
  if (m === null) return s.slice(0, 40);
  if (m[2] !== undefined)
    return `SELECT ${m[2]} ${s.includes('ingest_keys') ? '(dropped)' : s.includes('GROUP BY protocol_name') ? '(buckets)' : s.includes('countIf') ? '(counts)' : '(others)'}`;
  return m[1]!;
}

/** The warehouse with every statement's wall time added to `spent` under its name. */
/** Each statement's start and end (ms), in order: the gaps between them are the JavaScript's. */
const timeline: { name: string; start: number; end: number }[] = [];

function timed(wh: Warehouse, spent: Map<string, number[]>): Warehouse {
  const keep = (name: string, ms: number): void => {
    spent.set(name, [...(spent.get(name) ?? []), ms]);
    const end = performance.now();
    timeline.push({ name, start: end - ms, end });
  };
  const wrap =
    <A extends unknown[], R>(name: (...a: A) => string, fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t0 = performance.now();
      try {
        return await fn(...a);
      } finally {
        keep(name(...a), performance.now() - t0);
      }
    };
  return Object.assign(Object.create(wh) as Warehouse, {
    query: wrap((sql: string) => nameOf(sql), wh.query.bind(wh)),
    exec: wrap((sql: string) => nameOf(sql), wh.exec.bind(wh)),
    insert: wrap((table: string, _rows: readonly object[], _o?: object) => `insert ${table}`, wh.insert.bind(wh)),
    insertBytes: wrap((table: string, _d: Uint8Array, _f: string, _o?: object) => `insertBytes ${table}`, wh.insertBytes.bind(wh)),
  });
}

/** The last round's statements on one line each, with the time before each that no statement covered. */
function printTimeline(t0: number): void {
  let covered = t0;
  for (const t of [...timeline].sort((a, b) => a.start - b.start)) {
    say(
      `    +${(t.start - t0).toFixed(1).padStart(7)} ms (${Math.max(0, t.start - covered)
        .toFixed(1)
        .padStart(5)} ms uncovered before) ${(t.end - t.start).toFixed(1).padStart(6)} ms  ${t.name}`,
    );
    covered = Math.max(covered, t.end);
  }
}

async function main(): Promise<void> {
  const ROWS = Number(values.rows ?? 1_000_000);
  const SIZES = (values.sizes ?? '1000,4000,40000').split(',').map(Number);
  const ROUNDS = Number(values.rounds ?? 5);
  const server = await startBenchServer(ROWS);
  const { wh, registry, dataVersion } = server.services;
  const spent = new Map<string, number[]>();
  const log = createLogger('silent');
  const pipeline = new IngestPipeline(timed(wh, spent), registry, dataVersion, log, { ...benchPipelineOptions(server.services), checks: 'engine' });
  const fresh = freshBodies(wh, 2000);
  await warmPipeline(pipeline, 'engine pipeline', fresh, say);
  await pipeline.ingestNdjson(Buffer.from(await fresh(2000)), 'bench-warm');
  say(`store: ${ROWS.toLocaleString('en-US')} rows; ${machine()}`);
  for (const size of SIZES) {
    const perStatement = new Map<string, number[]>();
    const whole: number[] = [];
    const engine: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const [a, b] = [Buffer.from(await fresh(size)), Buffer.from(await fresh(size))];
      engine.push(await timeMs(() => engineInsert(wh, a)));
      spent.clear();
      timeline.length = 0;
      const t0 = performance.now();
      whole.push(await timeMs(() => pipeline.ingestNdjson(b, 'bench')));
      if (r === ROUNDS - 1 && values.timeline === true) printTimeline(t0);
      for (const [k, ms] of spent) perStatement.set(k, [...(perStatement.get(k) ?? []), ms.reduce((x, y) => x + y, 0)]);
    }
    const e = median(engine);
    const w = median(whole);
    say(
      `\n${size} records a body (median of ${ROUNDS}): the engine's insert ${e.toFixed(1)} ms, today's engine path ${w.toFixed(1)} ms, ratio ${(e / w).toFixed(2)}`,
    );
    let sum = 0;
    for (const [k, ms] of [...perStatement].sort((x, y) => median(y[1]) - median(x[1]))) {
      sum += median(ms);
      say(`  ${median(ms).toFixed(1).padStart(8)} ms  ${((median(ms) * 1000) / size).toFixed(2).padStart(7)} µs/record  ${k}`);
    }
    say(`  ${sum.toFixed(1).padStart(8)} ms  statements (sum of medians); ${(w - sum).toFixed(1)} ms outside them`);
  }
  await server.close();
}

await main();
