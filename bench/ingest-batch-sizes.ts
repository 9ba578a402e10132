// Kafka-shaped batches through the pipeline, checks in the engine against checks in JavaScript
// (issue 40): `npx tsx bench/ingest-batch-sizes.ts [--sizes 50,250,1000,5000] [--rounds 3] [--concurrent 4]`.
// Each round hands `concurrent` batches of `size` fresh records at once (as that many Kafka
// partitions' batches in hand do) to each design in turn, alternating which goes first, and
// times the calls until every one resolved (stored and queryable). The figure that matters is
// the ratio engine / JavaScript in the same round: the machine is shared.
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../core/logger.ts';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { IngestPipeline, type RawRecord } from '../ingest/pipeline.ts';
import { startBenchServices } from './bench-server.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { sizes: { type: 'string' }, rounds: { type: 'string' }, concurrent: { type: 'string' }, tag: { type: 'string' } } });
const SIZES = (values.sizes ?? '50,250,1000,5000').split(',').map(Number);
const ROUNDS = Number(values.rounds ?? 3);
const CONCURRENT = Number(values.concurrent ?? 4);
const report = (line: string): void => void process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const s = await startBenchServices({ LOG_LEVEL: 'warn', INGEST_CHECKS: 'engine' });
  const designs = {
    engine: s.pipeline,
    javascript: new IngestPipeline(s.wh, s.registry, s.dataVersion, createLogger('warn'), {
      maxRecordBytes: s.config.ingest.maxRecordBytes,
      batchRows: s.config.ingest.batchRows,
      writerId: 'bench-javascript',
      checks: 'javascript',
    }),
  };
  const needed = SIZES.reduce((n, size) => n + size * CONCURRENT * ROUNDS * 2, 0);
  const now = Math.floor(Date.now() / 1000);
  const text = await demoRecordsNdjson(s.wh, { seed: 31, total: needed, offset: 0, count: needed, startTime: now - 600, endTime: now });
  const all = text.split('\n').filter(Boolean);
  let next = 0;
  const batch = (size: number, partition: number): RawRecord[] =>
    all.slice(next, (next += size)).map((line, i) => ({ value: Buffer.from(line), position: { topic: 'bench', partition, offset: String(next - size + i) } }));
  const results: Record<string, unknown>[] = [];
  try {
    for (const size of SIZES) {
      for (let round = 0; round < ROUNDS; round += 1) {
        const order = round % 2 === 0 ? (['engine', 'javascript'] as const) : (['javascript', 'engine'] as const);
        const rate: Record<string, number> = {};
        for (const design of order) {
          const calls = Array.from({ length: CONCURRENT }, (_, p) => batch(size, p));
          const t0 = performance.now();
          const reports = await Promise.all(calls.map((c) => designs[design].ingest(c, 'bench')));
          const seconds = (performance.now() - t0) / 1000;
          const stored = reports.reduce((n, r) => n + r.accepted, 0);
          if (stored !== size * CONCURRENT) throw new Error(`${design}: ${stored} of ${size * CONCURRENT} stored`);
          rate[design] = stored / seconds;
        }
        const row = {
          size,
          round,
          load: loadavg()[0],
          engine: Math.round(rate.engine!),
          javascript: Math.round(rate.javascript!),
          ratio: Number((rate.engine! / rate.javascript!).toFixed(2)),
        };
        results.push(row);
        report(JSON.stringify(row));
      }
    }
  } finally {
    await designs.javascript.close();
    await s.cleanup();
  }
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const file = path.join(ROOT, 'bench', 'results', `ingest-batch-sizes${values.tag === undefined ? '' : `-${values.tag}`}.json`);
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), concurrent: CONCURRENT, results }, null, 2)}\n`);
  report(`results written to ${path.relative(ROOT, file)}`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
