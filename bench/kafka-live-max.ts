// Freshness at 80 % of the maximum rate sustained live (issue 40), ours against ClickHouse's
// own Kafka engine, with the producer on the same machine:
//  1. ramp: a live topic produced at --from records/s, then x --step each round, through our
//     source, until a round is not sustained (the producer fell short of its rate by more than
//     5 %, or the last third of the records waited longer than the first third by more than
//     --max-lag-growth ms: a queue that grows). The maximum sustained live rate is the last
//     sustained round's achieved rate. bench/kafka-ingest.ts's "maximum" drains a pre-filled
//     topic with no producer running; on two cores the producer takes a large share of a
//     core, so that figure is not a rate this machine can produce and consume at once.
//  2. freshness at --fraction (0.8) of that rate, --repeats times: produce -> stored and
//     produce -> counted by the activity query (what getProtocolActivity answers from);
//  3. the ceiling: ClickHouse's Kafka engine on a live topic at the same rate into a copy of
//     the same table and views (no validation, no de-duplication), produce -> its block
//     through the views, with --engine-flush-ms as its flush interval (kafka_flush_interval_ms),
//     while the activity query is polled as often as in our runs (the same load beside it).
// Usage: npx tsx bench/kafka-live-max.ts [--from 6000] [--step 1.15] [--seconds 20] [--repeats 3]
//        [--warmup R] (one round at R first, reported apart) [--engine-first] (the Kafka engine's round first in each pair)
//        [--at R]   (no ramp: freshness at R records/s, to compare designs at one rate; the
//                    ingest settings under test come from the environment, as in kafka-ingest.ts)
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger } from '../core/logger.ts';
import { ensureTopics, kafkaClient } from '../ingest/kafka-client.ts';
import { startBroker } from '../scripts/daemons/kafka-broker.ts';
import { startBenchServices } from './bench-server.ts';
import { activityTotal, type BenchServices, type FreshnessFigures, freshness, ingestEnv, kafkaEngineCopy, POLL_MS, produceLive } from './kafka-freshness.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    step: { type: 'string' },
    seconds: { type: 'string' },
    repeats: { type: 'string' },
    fraction: { type: 'string' },
    'max-lag-growth': { type: 'string' },
    'engine-flush-ms': { type: 'string' },
    at: { type: 'string' },
    warmup: { type: 'string' },
    'engine-first': { type: 'boolean' },
    tag: { type: 'string' },
  },
});
const FROM = Number(values.from ?? 6_000);
const STEP = Number(values.step ?? 1.15);
const SECONDS = Number(values.seconds ?? 20);
const REPEATS = Number(values.repeats ?? 3);
const FRACTION = Number(values.fraction ?? 0.8);
const MAX_LAG_GROWTH_MS = Number(values['max-lag-growth'] ?? 500);
const ENGINE_FLUSH_MS = Number(values['engine-flush-ms'] ?? 500);
/** --at R: no ramp; freshness at R records/s (a maximum measured before, times the fraction). */
const AT = values.at === undefined ? undefined : Number(values.at);
/** --warmup R: one round at R records/s first, kept apart (is a process's first round the tail?). */
const WARMUP = values.warmup === undefined ? undefined : Number(values.warmup);
if (WARMUP !== undefined && !(Number.isInteger(WARMUP) && WARMUP > 0)) throw new Error('--warmup is a positive whole number of records/s');
if (AT !== undefined && !(Number.isInteger(AT) && AT > 0)) throw new Error('--at is a positive whole number of records/s');
if (!(STEP > 1) || !(FRACTION > 0 && FRACTION <= 1) || ![FROM, SECONDS, REPEATS, ENGINE_FLUSH_MS].every((n) => Number.isInteger(n) && n > 0)) {
  throw new Error('--from, --seconds, --repeats, --engine-flush-ms: positive whole numbers; --step > 1; --fraction in (0, 1]');
}
/** Sustained: the producer within 5 % of its rate. */
const PRODUCER_SHORTFALL = 0.95;
/** The ramp stops here whatever happens (records/s). */
const RAMP_CEILING = 200_000;
const report = (line: string): void => void process.stderr.write(`${line}\n`);
const load = (): string => loadavg()[0]!.toFixed(1);

async function main(): Promise<void> {
  const broker = await startBroker();
  const env = ingestEnv();
  const s = await startBenchServices({ LOG_LEVEL: 'warn', ...env });
  const results: Record<string, unknown> = {
    at: new Date().toISOString(),
    from: FROM,
    step: STEP,
    seconds: SECONDS,
    fraction: FRACTION,
    loadAtStart: loadavg(),
  };
  try {
    if (WARMUP !== undefined) results.warmup = await freshness(s, broker.brokers, { rate: WARMUP, seconds: SECONDS });
    const ramp: (FreshnessFigures & { asked: number; sustained: boolean; load: string })[] = [];
    let maxLive = AT === undefined ? 0 : AT / FRACTION;
    for (let rate = FROM; AT === undefined && rate <= RAMP_CEILING; rate = Math.round(rate * STEP)) {
      const f = await freshness(s, broker.brokers, { rate, seconds: SECONDS });
      const sustained = f.producedRecordsPerSecond >= PRODUCER_SHORTFALL * rate && f.lagGrowthMs <= MAX_LAG_GROWTH_MS;
      ramp.push({ ...f, asked: rate, sustained, load: load() });
      report(`  ramp ${rate}/s: ${sustained ? 'sustained' : 'not sustained'} (lag growth ${f.lagGrowthMs} ms, load ${load()})`);
      if (!sustained) break;
      maxLive = f.producedRecordsPerSecond;
    }
    results.ramp = ramp;
    results.maxLiveRecordsPerSecond = maxLive;
    if (maxLive === 0) throw new Error(`--from ${FROM} records/s was not sustained; start lower`);
    const rate = AT ?? Math.round(FRACTION * maxLive);
    report(`maximum sustained live rate ${maxLive}/s; freshness at ${FRACTION} x = ${rate}/s`);
    const ours: FreshnessFigures[] = [];
    const engine: EngineFreshness[] = [];
    for (let i = 0; i < REPEATS; i++) {
      // --engine-first: the Kafka engine takes each pair's first turn (is the first round's tail
      // the process's and the broker's first minute at this rate, whoever consumes?).
      if (values['engine-first'] === true) engine.push(await engineFreshness(s, broker.brokers, rate));
      ours.push(await freshness(s, broker.brokers, { rate, seconds: SECONDS }));
      if (values['engine-first'] !== true) engine.push(await engineFreshness(s, broker.brokers, rate));
    }
    results.ours = ours;
    results.engine = engine;
    results.rate = rate;
  } finally {
    await s.cleanup();
    await broker.cleanup();
  }
  results.loadAtEnd = loadavg();
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const file = path.join(ROOT, 'bench', 'results', `kafka-live-max${values.tag === undefined ? '' : `-${values.tag}`}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  report(`results written to ${path.relative(ROOT, file)}`);
}

interface EngineFreshness {
  producedRecordsPerSecond: number;
  records: number;
  storedP50Ms: number;
  storedP99Ms: number;
}

/** ClickHouse's Kafka engine on a live topic at `rate`: produce -> its block through the copy's views. */
async function engineFreshness(s: BenchServices, brokers: string, rate: number): Promise<EngineFreshness> {
  const topic = `engine-fresh-${Date.now()}`;
  await ensureTopics(kafkaClient({ brokers: [brokers], clientId: 'bench-engine' }, createLogger('warn')), [topic], 4);
  await kafkaEngineCopy(s.wh, brokers, topic, `kafka_max_block_size = 5000, kafka_flush_interval_ms = ${ENGINE_FLUSH_MS}`);
  try {
    const total = rate * SECONDS;
    const live = produceLive(brokers, topic, total, rate);
    // The activity query polled as often as in our runs, so both pay for the polling's load
    // (it reads our tables: the same work, whatever it counts).
    let producing = true;
    const t0 = Math.floor(Date.now() / 1000);
    const polling = (async () => {
      while (producing) {
        await activityTotal(s, { gte: t0 - 3600, lte: t0 + SECONDS + 3600 });
        await sleep(POLL_MS);
      }
    })();
    const achieved = await live.achieved().finally(() => (producing = false));
    await polling;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [r] = await s.wh.query<{ n: string }>('SELECT count() AS n FROM kbench.latency');
      if (Number(r?.n ?? 0) >= total || Date.now() > deadline) break;
      await sleep(50);
    }
    const [q] = await s.wh.query<{ n: string; p50: string; p99: string }>(
      `SELECT count() AS n, quantileExact(0.5)(ms) AS p50, quantileExact(0.99)(ms) AS p99
       FROM (SELECT toInt64(toUnixTimestamp64Milli(stored)) - toInt64(toUnixTimestamp64Milli(produced)) AS ms FROM kbench.latency)`,
    );
    const out = { producedRecordsPerSecond: achieved, records: Number(q?.n ?? 0), storedP50Ms: Number(q?.p50 ?? NaN), storedP99Ms: Number(q?.p99 ?? NaN) };
    report(
      `ClickHouse Kafka engine at ${rate} records/s (flush ${ENGINE_FLUSH_MS} ms; producer achieved ${achieved}/s): produce -> through its views p50 ${out.storedP50Ms} ms, p99 ${out.storedP99Ms} ms (${out.records} of ${total} records)`,
    );
    return out;
  } finally {
    await s.wh.exec('DROP DATABASE kbench SYNC');
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
