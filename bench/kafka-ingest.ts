// Kafka ingest benchmark (npm run bench:kafka -- [--count N] [--rate R] [--seconds S]):
//  1. sustained end-to-end rate of our source (broker, consumer, pipeline, views) over a
//     pre-filled topic, with the producer's own rate alongside;
//  2. ClickHouse's own Kafka table engine in the same embedded engine consuming the same
//     topic into the same table shape (a copy of transactions and its views), and the ratio;
//  3. freshness: records produced at R records/s (npm run produce --live, its own process)
//     while our source runs; p50/p99 from each record's produce timestamp until its batch
//     is stored, and until an activity query through the analytics layer (what
//     getProtocolActivity answers from) counts it. --rate-fraction F instead of --rate: R =
//     F x our measured rate of phase 1 (issue 40 measures at 0.8);
//  4. (--backfill) the same freshness again while a source replays a topic of --count records the
//     store does not hold yet from its beginning: in the live lane (one queue, as before issue 40),
//     then in the backfill lane (issue 40: < 2 s at p99 beside it), with the replay's own rate.
// A large replay is produced once and reused by later runs against the same broker:
//   scripts/kafka.sh start; then --brokers 127.0.0.1:PORT --backfill-topic NAME, and from the
//   second run on also --backfill-produced (the topic NAME-<lane> already holds the records).
// Defaults are a smoke run that finishes in about a minute; the recorded runs use
// --count 1000000 --rate 20000 --seconds 60. Everything stays on loopback.
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Partitioners } from 'kafkajs';
import { createLogger } from '../core/logger.ts';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { ensureTopics, kafkaClient } from '../ingest/kafka-client.ts';
import { publishLines } from '../ingest/kafka-producer.ts';
import { KafkaSource } from '../ingest/kafka-source.ts';
import { startBroker } from '../scripts/daemons/kafka-broker.ts';
import { startBenchServices } from './bench-server.ts';
import { freshness, ingestEnv, kafkaEngineCopy } from './kafka-freshness.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    count: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    brokers: { type: 'string' },
    'rate-fraction': { type: 'string' },
    backfill: { type: 'boolean' },
    'backfill-count': { type: 'string' },
    'backfill-topic': { type: 'string' },
    'backfill-produced': { type: 'boolean' },
    lanes: { type: 'string' },
    tag: { type: 'string' },
  },
});
const COUNT = Number(values.count ?? 20_000);
// The replay's size apart from phase 1's (issue 40 asks for 10M beside live), and which lanes
// to replay it in (both by default: the live lane's figure is the one to beat).
const BACKFILL_COUNT = Number(values['backfill-count'] ?? COUNT);
const LANES = (values.lanes ?? 'live,backfill').split(',');
if (!Number.isInteger(BACKFILL_COUNT) || BACKFILL_COUNT <= 0) throw new Error('--backfill-count must be a positive whole number');
if (LANES.length === 0 || LANES.some((l) => l !== 'live' && l !== 'backfill')) throw new Error('--lanes takes live, backfill or both');
const FRACTION = values['rate-fraction'] === undefined ? undefined : Number(values['rate-fraction']);
if (FRACTION !== undefined && !(FRACTION > 0 && FRACTION <= 2)) throw new Error('--rate-fraction must be in (0, 2]');
let RATE = Number(values.rate ?? 5_000);
const SECONDS = Number(values.seconds ?? 5);
for (const [name, v] of Object.entries({ count: COUNT, rate: RATE, seconds: SECONDS })) {
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`);
}

const log = createLogger('warn');
const report = (line: string): void => void process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const broker = values.brokers === undefined ? await startBroker() : undefined;
  const brokers = values.brokers ?? broker!.brokers;
  // Ingest settings under test come from the environment (INGEST_BATCH_ROWS, KAFKA_MAX_BYTES_PER_PARTITION, ...).
  // The machine is shared: the load average at the start and the end goes with every figure.
  const env = ingestEnv();
  const s = await startBenchServices({ LOG_LEVEL: 'warn', ...env });
  const kafka = kafkaClient({ brokers: [brokers], clientId: 'bench' }, log);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const results: Record<string, unknown> = { count: COUNT, rate: RATE, seconds: SECONDS, at: new Date().toISOString(), env, loadAtStart: loadavg() };
  try {
    await producer.connect();
    const topic = `bench-${Date.now()}`;
    await ensureTopics(kafka, [topic], 4);

    // Phase 1: fill the topic, then drain it with our source.
    const now = Math.floor(Date.now() / 1000);
    const window = { startTime: now - 86_400, endTime: now };
    let t0 = performance.now();
    for (let offset = 0; offset < COUNT; offset += 50_000) {
      const count = Math.min(50_000, COUNT - offset);
      const text = await demoRecordsNdjson(s.wh, { seed: 9, total: COUNT, offset, count, ...window });
      await publishLines(producer, topic, text.split('\n').filter(Boolean));
    }
    const produceRate = COUNT / ((performance.now() - t0) / 1000);
    report(`produce (generate + publish): ${Math.round(produceRate)} records/s`);

    const source = new KafkaSource(
      s.pipeline,
      log,
      { ...s.config.kafka, brokers: [brokers], topic, deadLetterTopic: `${topic}.dlq`, groupId: `${topic}-ours` },
      {},
      s.metrics.kafka,
    );
    await source.start();
    // Both consumers are timed from their first stored rows to the last: joining a group
    // and starting up are one-off costs, not part of the sustained rate.
    while (source.stats().stored === 0) await sleep(5);
    const firstOurs = source.stats().stored;
    t0 = performance.now();
    while (source.stats().stored < COUNT) await sleep(5);
    const oursRate = (COUNT - firstOurs) / ((performance.now() - t0) / 1000);
    await source.stop();
    const insert = await s.metrics.registry.getSingleMetric('txa_ingest_kafka_batch_insert_seconds')?.get();
    const sum = insert?.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_sum'))?.value ?? 0;
    const n = insert?.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_count'))?.value ?? 0;
    report(`  ${n} batches, ${Math.round(COUNT / Math.max(1, n))} records each, ${Math.round((sum / Math.max(1, n)) * 1000)} ms per pipeline.ingest`);
    report(`our source (fetch + validate + de-duplicate + insert + views + commit): ${Math.round(oursRate)} records/s`);
    // Where a batch's time went (txa_ingest_stage_seconds: mean per observation, ms).
    const stages = await s.metrics.registry.getSingleMetric('txa_ingest_stage_seconds')?.get();
    const perStage: Record<string, number> = {};
    for (const v of stages?.values ?? []) {
      const stage = String(v.labels.stage);
      const name = (v as { metricName?: string }).metricName ?? '';
      if (name.endsWith('_sum')) perStage[`${stage}Sum`] = v.value;
      if (name.endsWith('_count')) perStage[`${stage}Count`] = v.value;
    }
    const stageMs = Object.fromEntries(
      ['parse', 'queue', 'dedupe', 'journal', 'insert', 'notify'].map((k) => [
        k,
        Math.round(((perStage[`${k}Sum`] ?? 0) / Math.max(1, perStage[`${k}Count`] ?? 0)) * 1000),
      ]),
    );
    report(`  mean ms per stage: ${JSON.stringify(stageMs)}`);
    results.stageMs = stageMs;
    results.produceRecordsPerSecond = Math.round(produceRate);
    results.oursRecordsPerSecond = Math.round(oursRate);
    if (FRACTION !== undefined) {
      RATE = Math.max(1, Math.round(FRACTION * oursRate));
      results.rate = RATE;
      report(`freshness rate: ${FRACTION} x ${Math.round(oursRate)} = ${RATE} records/s`);
    }

    // Phase 2: ClickHouse's Kafka engine into a copy of the same table shape and views.
    const chRate = await clickhouseKafkaEngine(s.wh, brokers, topic, COUNT);
    results.clickhouseKafkaEngineRecordsPerSecond = chRate === undefined ? null : Math.round(chRate);
    if (chRate !== undefined) {
      results.ratioOursToEngine = Number((oursRate / chRate).toFixed(2));
      report(`ClickHouse Kafka engine (no validation, no de-duplication): ${Math.round(chRate)} records/s; ours/engine = ${(oursRate / chRate).toFixed(2)}`);
    }

    // Phase 3: freshness at RATE records/s, produce acknowledgement -> visible in activity.
    results.freshness = await freshness(s, brokers, { rate: RATE, seconds: SECONDS });
    if (values.backfill) {
      // Topics of COUNT records the store does not hold yet (other seeds), each replayed from its
      // beginning beside the live topic: in the live lane (as before issue 40: one queue), then in
      // the backfill lane, so the lanes' effect on live freshness is measured in one run.
      for (const [lane, seed] of [
        ['live', 21],
        ['backfill', 22],
      ] as const) {
        if (!LANES.includes(lane)) continue;
        const backfillTopic = `${values['backfill-topic'] ?? `backfill-${Date.now()}`}-${lane}`;
        await ensureTopics(kafka, [backfillTopic], 4);
        const started = performance.now();
        // --backfill-produced: an earlier run (same --brokers, --backfill-topic and count) produced it.
        for (let offset = 0; offset < (values['backfill-produced'] ? 0 : BACKFILL_COUNT); offset += 50_000) {
          const count = Math.min(50_000, BACKFILL_COUNT - offset);
          const text = await demoRecordsNdjson(s.wh, { seed, total: BACKFILL_COUNT, offset, count, ...window });
          await publishLines(producer, backfillTopic, text.split('\n').filter(Boolean));
          if ((offset / 50_000) % 20 === 19)
            report(`backfill topic (${lane} lane): ${offset + count} of ${BACKFILL_COUNT} produced, ${Math.round((performance.now() - started) / 1000)} s`);
        }
        results[`backfillCount`] = BACKFILL_COUNT;
        results[`freshnessBesideBackfillIn${lane === 'live' ? 'LiveLane' : 'BackfillLane'}`] = await freshness(
          s,
          brokers,
          { rate: RATE, seconds: SECONDS },
          { topic: backfillTopic, lane },
        );
      }
    }
  } finally {
    await producer.disconnect();
    await s.cleanup();
    await broker?.cleanup();
  }
  results.loadAtEnd = loadavg();
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const file = path.join(ROOT, 'bench', 'results', `kafka-ingest-${COUNT}${values.tag === undefined ? '' : `-${values.tag}`}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  report(`results written to ${path.relative(ROOT, file)}`);
}

async function clickhouseKafkaEngine(
  wh: Awaited<ReturnType<typeof startBenchServices>>['wh'],
  brokers: string,
  topic: string,
  count: number,
): Promise<number | undefined> {
  await kafkaEngineCopy(wh, brokers, topic);
  const deadline = Date.now() + 120_000;
  let n = 0;
  let first: { n: number; t: number } | undefined;
  while (Date.now() < deadline) {
    const [r] = await wh.query<{ n: string }>('SELECT count() AS n FROM kbench.transactions');
    n = Number(r?.n ?? 0);
    if (n > 0 && first === undefined) first = { n, t: performance.now() };
    if (n >= count) break;
    await sleep(5);
  }
  const seconds = (performance.now() - (first?.t ?? 0)) / 1000;
  await wh.exec('DROP DATABASE kbench SYNC');
  if (n < count) {
    report(`ClickHouse Kafka engine: only ${n} of ${count} records arrived within 120 s; no rate recorded`);
    return undefined;
  }
  // Everything in one block: no sustained phase to time; report it as unmeasurable.
  if (first === undefined || first.n >= count) {
    report('ClickHouse Kafka engine: the whole topic arrived in one block; use a larger --count for a rate');
    return undefined;
  }
  return (count - first.n) / seconds;
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
