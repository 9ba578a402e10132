// De-duplication's store lookup, its forms (issue 40, kafka40): npx tsx bench/dedupe-lookup.ts
// [--records N] [--batch B] [--reps R]. On a store of N demo records (one day), batches of B records:
//  1. the lookup of a batch (StoreDedupe.stored) the store does not hold (the common case: one read
//     of ingest_keys) and of one it holds whole (a redelivery: the signature index too), with bound
//     values and with literal values (ingest/steps/lookup-args.ts), on the serving session;
//  2. the writer's turn as before (the lookup, then the insert) against the insert with the next
//     batch's literal lookup on a side session beside it (INGEST_DEDUPE_LOOKUP=beside-insert), and
//     with a bound lookup beside it (chDB's chain of bound statements does not hold inserts back, but
//     it does hold the lookup behind every other bound statement of the process: the API's reads).
// Medians of R interleaved repetitions, ms; the load average at the start and the end.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { INGEST_DEDUPE_SIDE_SESSION } from '../core/limits/ingest.ts';
import { cityHasher } from '../ingest/city-hash.ts';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { StoreDedupe, type LookupWay } from '../ingest/steps/dedupe.ts';
import { insertRows } from '../ingest/steps/insert.ts';
import type { Accepted } from '../ingest/steps/records.ts';
import { startBenchServices } from './bench-server.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { records: { type: 'string' }, batch: { type: 'string' }, reps: { type: 'string' } } });
const RECORDS = Number(values.records ?? 200_000);
const BATCH = Number(values.batch ?? 4_200);
const REPS = Number(values.reps ?? 8);
const report = (line: string): void => void process.stderr.write(`${line}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const BOUND: LookupWay = { literal: false };
const LITERAL: LookupWay = { literal: true };
const SIDE: LookupWay = { literal: true, sideSession: INGEST_DEDUPE_SIDE_SESSION };
const BOUND_SIDE: LookupWay = { literal: false, sideSession: INGEST_DEDUPE_SIDE_SESSION };

async function main(): Promise<void> {
  const s = await startBenchServices({ LOG_LEVEL: 'warn', INGEST_PARSE_WORKERS: '0' });
  const results: Record<string, unknown> = { records: RECORDS, batch: BATCH, reps: REPS, at: new Date().toISOString(), loadAtStart: loadavg() };
  const now = Math.floor(Date.now() / 1000);
  const window = { startTime: now - 86_400, endTime: now };
  const hasher = cityHasher();
  const batchOf = async (seed: number, total: number, offset: number, count: number): Promise<Accepted[]> => {
    const text = await demoRecordsNdjson(s.wh, { seed, total, offset, count, ...window });
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const r = JSON.parse(line) as { signature: string; instruction_index: number; protocol_name: string; block_time: number };
        hasher.hash(r.signature);
        return {
          signature: r.signature,
          instruction_index: r.instruction_index,
          protocol_name: r.protocol_name,
          block_time: r.block_time,
          kh: hasher.high(),
          kl: hasher.low(),
          line,
        };
      });
  };
  try {
    for (let offset = 0; offset < RECORDS; offset += 50_000) {
      const text = await demoRecordsNdjson(s.wh, { seed: 9, total: RECORDS, offset, count: Math.min(50_000, RECORDS - offset), ...window });
      await s.pipeline.ingest(
        text
          .split('\n')
          .filter(Boolean)
          .map((value, i) => ({ value, position: { line: i + 1 } })),
        'bench',
      );
    }
    const store = new StoreDedupe(s.wh);
    const stored = await batchOf(9, RECORDS, 0, BATCH);
    const timed = async (fn: () => Promise<unknown>): Promise<number> => {
      const t0 = performance.now();
      await fn();
      return performance.now() - t0;
    };
    const lookups: Record<string, number[]> = {};
    const turns: Record<string, number[]> = {};
    const add = (into: Record<string, number[]>, k: string, v: number): void => void (into[k] ??= []).push(v);
    for (let rep = 0; rep < REPS; rep++) {
      const fresh = await batchOf(1000 + rep, BATCH, 0, BATCH);
      for (const [name, way] of [
        ['bound', BOUND],
        ['literal', LITERAL],
      ] as const) {
        add(lookups, `${name}, a batch not stored`, await timed(() => store.stored(fresh, way)));
        add(lookups, `${name}, a batch stored whole`, await timed(() => store.stored(stored, way)));
      }
      // A writer's turn: batch X is checked and inserted, batch Y is the next one.
      const [x1, y1, x2, y2, x3, y3] = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => batchOf(2000 + rep * 10 + i, BATCH, 0, BATCH)));
      add(turns, 'insert alone', await timed(() => insertRows(s.wh, x1!, true)));
      add(
        turns,
        'lookup (bound), then insert: the turn before',
        await timed(async () => {
          await store.stored(y1!, BOUND);
          await insertRows(s.wh, x2!, true);
        }),
      );
      add(
        turns,
        'insert, next lookup beside it (literal, side session)',
        await timed(() => Promise.all([insertRows(s.wh, x3!, true), store.stored(y2!, SIDE)])),
      );
      add(
        turns,
        'insert, next lookup beside it (bound, side session)',
        await timed(() => Promise.all([insertRows(s.wh, y3!, true), store.stored(y1!, BOUND_SIDE)])),
      );
    }
    const summary = (into: Record<string, number[]>): Record<string, number> =>
      Object.fromEntries(Object.entries(into).map(([k, v]) => [k, Math.round(median(v))]));
    results.lookupMs = summary(lookups);
    results.turnMs = summary(turns);
    for (const [k, v] of Object.entries({ ...summary(lookups), ...summary(turns) })) report(`${k}: ${v} ms`);
  } finally {
    await s.cleanup();
  }
  results.loadAtEnd = loadavg();
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const file = path.join(ROOT, 'bench', 'results', `dedupe-lookup-${RECORDS}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  report(`results written to ${path.relative(ROOT, file)}`);
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
