// A serving read's latency while a body goes through the engine's checks in the same process
// (issue 40, session 17): chDB's Node binding runs every statement with bound parameters one
// after another, process-wide, so a bound read waits behind a bound ingest statement (the
// checks of a 40,000-line body take ~300 ms). The ingest statements take literal values since
// session 17; "bound" here is the same pipeline with literalParams taken away, in alternation.
//   DATA_DIR=<store> npx tsx bench/ingest-beside-reads.ts [--rows 1000000] [--records 40000] [--rounds 6]
import { parseArgs } from 'node:util';
import { createLogger } from '../core/logger.ts';
import { IngestPipeline } from '../ingest/pipeline.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { startBenchServer } from './bench-server.ts';
import { machine, median } from './bench-support.ts';
import { benchPipelineOptions, freshBodies, warmPipeline } from './ingest-support.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' }, records: { type: 'string' }, rounds: { type: 'string' } } });
const say = (s: string): void => void process.stdout.write(`${s}\n`);

/** The warehouse with every statement's parameters bound (literalParams taken away). */
function bound(wh: Warehouse): Warehouse {
  const strip = <O extends { literalParams?: boolean }>(o: O | undefined): O | undefined => (o === undefined ? o : { ...o, literalParams: false });
  return Object.assign(Object.create(wh) as Warehouse, {
    query: (sql: string, o?: Parameters<Warehouse['query']>[1]) => wh.query(sql, strip(o)),
    exec: (sql: string, o?: Parameters<Warehouse['exec']>[1]) => wh.exec(sql, strip(o)),
  });
}

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;

async function main(): Promise<void> {
  const ROWS = Number(values.rows ?? 1_000_000);
  const RECORDS = Number(values.records ?? 40_000);
  const ROUNDS = Number(values.rounds ?? 6);
  const server = await startBenchServer(ROWS);
  const { wh, registry, dataVersion } = server.services;
  const log = createLogger('silent');
  const options = { ...benchPipelineOptions(server.services), checks: 'engine' as const };
  const pipelines = {
    literal: new IngestPipeline(wh, registry, dataVersion, log, options),
    bound: new IngestPipeline(bound(wh), registry, dataVersion, log, options),
  };
  const fresh = freshBodies(wh, RECORDS);
  for (const [name, p] of Object.entries(pipelines)) await warmPipeline(p, name, fresh, say);
  say(`store: ${ROWS.toLocaleString('en-US')} rows; ${RECORDS.toLocaleString('en-US')} records a body; ${machine()}`);
  const figures: Record<string, { p50: number[]; p99: number[]; max: number[] }> = {
    literal: { p50: [], p99: [], max: [] },
    bound: { p50: [], p99: [], max: [] },
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of (r % 2 === 0 ? ['literal', 'bound'] : ['bound', 'literal']) as ('literal' | 'bound')[]) {
      const body = Buffer.from(await fresh());
      // A small bound read, as the doors send them, one after another for the body's whole call.
      const reads: number[] = [];
      let done = false;
      const reader = (async () => {
        while (!done) {
          const t0 = performance.now();
          await wh.query('SELECT protocol_name FROM protocols FINAL WHERE protocol_name = {p:String}', { params: { p: 'jupiter_v6' } });
          reads.push(performance.now() - t0);
        }
      })();
      await pipelines[name].ingestNdjson(body, 'bench');
      done = true;
      await reader;
      figures[name]!.p50.push(quantile(reads, 0.5));
      figures[name]!.p99.push(quantile(reads, 0.99));
      figures[name]!.max.push(Math.max(...reads));
      say(
        `round ${r + 1} ${name}: ${reads.length} reads, p50 ${quantile(reads, 0.5).toFixed(1)} ms, p99 ${quantile(reads, 0.99).toFixed(1)} ms, max ${Math.max(...reads).toFixed(1)} ms`,
      );
    }
  }
  for (const [name, f] of Object.entries(figures)) {
    say(
      `${name}: a read beside the body's call, median over rounds: p50 ${median(f.p50).toFixed(1)} ms, p99 ${median(f.p99).toFixed(1)} ms, max ${median(f.max).toFixed(1)} ms`,
    );
  }
  await server.close();
}

await main();
