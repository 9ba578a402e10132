// Freshness of a live topic through our Kafka source (bench/kafka-ingest.ts, bench/kafka-live-max.ts):
// records produced at a rate by `npm run produce --live` in its own process, timed from each
// record's produce timestamp until its batch is stored and until the activity query (what
// getProtocolActivity answers from) counts it; optionally beside a topic replayed from its
// beginning in a given lane.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../core/logger.ts';
import { ensureTopics, kafkaClient } from '../ingest/kafka-client.ts';
import { KafkaSource } from '../ingest/kafka-source.ts';
import type { Lane } from '../ingest/pipeline.ts';
import type { startBenchServices } from './bench-server.ts';

export type BenchServices = Awaited<ReturnType<typeof startBenchServices>>;

export interface FreshnessFigures {
  producedRecordsPerSecond: number;
  records: number;
  storedP50Ms: number;
  storedP99Ms: number;
  /** How much later than the first third's records the last third's were stored (p50, ms): a
   *  rate the source keeps up with holds this near 0; a growing lag is a rate past its maximum. */
  lagGrowthMs: number;
  visibleP50Ms: number;
  visibleP99Ms: number;
  /** Batches whose oldest record waited over a second: [ms since the producer started, records, that wait ms]
   *  (where the tail comes from: a few stalls, or every batch). */
  slowBatches: [number, number, number][];
  backfillRecordsPerSecond?: number;
  backfillRecords?: number;
}

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = createLogger('warn');
const report = (line: string): void => void process.stderr.write(`${line}\n`);
export const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

/** Batches whose oldest record waited more than SLOW_MS until stored. */
function slowBatches(stored: readonly { storedAt: number; timestamps: number[] }[], t0: number): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const b of stored) {
    const wait = b.storedAt - Math.min(...b.timestamps);
    if (wait > SLOW_MS) out.push([b.storedAt - t0, b.timestamps.length, wait]);
  }
  return out;
}
const SLOW_MS = 1000;

/** p50 store latency of the last third of the batches minus that of the first third. */
function lagGrowth(stored: readonly { storedAt: number; timestamps: number[] }[]): number {
  const third = Math.floor(stored.length / 3);
  if (third === 0) return 0;
  const p50 = (part: typeof stored): number =>
    quantile(
      part.flatMap((b) => b.timestamps.map((t) => b.storedAt - t)),
      0.5,
    );
  return Math.round(p50(stored.slice(-third)) - p50(stored.slice(0, third)));
}

/** Live records at `pace` through a new Kafka source on the services' pipeline, optionally beside
 *  a replay of `replay.topic` in a lane: produce → stored and produce → counted, per record. */
export async function freshness(
  s: BenchServices,
  brokers: string,
  pace: { rate: number; seconds: number },
  replay?: { topic: string; lane: Lane },
): Promise<FreshnessFigures> {
  const { rate: RATE, seconds: SECONDS } = pace;
  const backfillTopic = replay?.topic;
  const topic = `fresh-${Date.now()}`;
  const kafka = kafkaClient({ brokers: [brokers], clientId: 'bench-fresh' }, log);
  await ensureTopics(kafka, [topic], 4);
  const total = RATE * SECONDS;
  const active = new Set(await s.analytics.protocols());
  const protocolOf = (value: Buffer | null): string => /"protocol_name":"([a-z0-9_]+)"/.exec(value?.toString('latin1') ?? '')?.[1] ?? '';

  // Batches are stored one at a time (the pipeline serialises writes), so the activity
  // total reaching a batch's running total means that batch is visible.
  const stored: { storedAt: number; activeTotal: number; timestamps: number[] }[] = [];
  let activeTotal = 0;
  const storeLatency: number[] = [];
  const source = new KafkaSource(
    s.pipeline,
    log,
    {
      ...s.config.kafka,
      brokers: [brokers],
      topic,
      deadLetterTopic: `${topic}.dlq`,
      groupId: `${topic}-ours`,
    },
    {
      onStored: (b) => {
        const timestamps = b.messages.map((m) => Number(m.timestamp));
        for (const t of timestamps) storeLatency.push(b.storedAt - t);
        activeTotal += b.messages.filter((m) => active.has(protocolOf(m.value))).length;
        stored.push({ storedAt: b.storedAt, activeTotal, timestamps });
      },
    },
  );
  await source.start();
  await source.joined;
  // Phase 4: phase 1's topic replayed from its beginning beside the live topic, in the backfill lane.
  const backfill =
    backfillTopic === undefined
      ? undefined
      : new KafkaSource(s.pipeline, log, {
          ...s.config.kafka,
          brokers: [brokers],
          topic: backfillTopic,
          deadLetterTopic: `${backfillTopic}.dlq`,
          groupId: `${backfillTopic}-backfill-${Date.now()}`,
          fromBeginning: true,
          lane: replay!.lane,
          concurrentPartitions: replay!.lane === 'backfill' ? 1 : s.config.kafka.concurrentPartitions,
          progress: s.pipeline.backfills.start(`bench:${backfillTopic}`, null),
        });
  await backfill?.start();

  // Only this round's records may count: the live records are stamped from the producer's
  // start on, so the range starts at t0 (earlier rounds, phase 1's day and a replayed topic's
  // records are older), and what the range held before producing is subtracted.
  const t0 = Date.now();
  const range = { gte: Math.floor(t0 / 1000), lte: Math.floor(t0 / 1000) + SECONDS + 3600 };
  const before = await activityTotal(s, range);
  const live = produceLive(brokers, topic, total, RATE);

  const polls: { t: number; visible: number }[] = [];
  let producing = true;
  void live.done.then(() => (producing = false));
  const deadline = t0 + SECONDS * 1000 + 120_000;
  while (Date.now() < deadline) {
    polls.push({ t: Date.now(), visible: (await activityTotal(s, range)) - before });
    if (!producing && source.stats().stored >= total) break;
    await sleep(POLL_MS);
  }
  const achieved = await live.achieved();
  await source.stop();
  const backfillDone = backfill?.stats();
  await backfill?.stop();

  const visibleLatency: number[] = [];
  for (const b of stored) {
    const p = polls.find((x) => x.t >= b.storedAt && x.visible >= b.activeTotal);
    if (p) for (const ts of b.timestamps) visibleLatency.push(p.t - ts);
  }
  const liveSeconds = (Date.now() - t0) / 1000;
  const out: FreshnessFigures = {
    ...(backfillDone === undefined
      ? {}
      : {
          backfillRecordsPerSecond: Math.round((backfillDone.stored + backfillDone.duplicates) / liveSeconds),
          backfillRecords: backfillDone.stored + backfillDone.duplicates,
        }),
    producedRecordsPerSecond: achieved,
    records: storeLatency.length,
    storedP50Ms: Math.round(quantile(storeLatency, 0.5)),
    lagGrowthMs: lagGrowth(stored),
    slowBatches: slowBatches(stored, t0),
    storedP99Ms: Math.round(quantile(storeLatency, 0.99)),
    visibleP50Ms: Math.round(quantile(visibleLatency, 0.5)),
    visibleP99Ms: Math.round(quantile(visibleLatency, 0.99)),
  };
  report(
    `freshness at ${RATE} records/s${backfill ? ` beside a backfill in the ${replay!.lane} lane (${out.backfillRecordsPerSecond} records/s replayed)` : ''} (producer achieved ${achieved}/s): produce -> stored p50 ${out.storedP50Ms} ms, p99 ${out.storedP99Ms} ms; ` +
      `produce -> counted by the activity query p50 ${out.visibleP50Ms} ms, p99 ${out.visibleP99Ms} ms (${out.records} records)`,
  );
  return out;
}

/**
 * ClickHouse's own Kafka table engine in database `kbench`, consuming `topic` into a copy of
 * `transactions` and every view on it, with no validation and no de-duplication: the ceiling
 * our source is compared against. `kbench.latency` gets each record's produce timestamp and
 * the time its block reached the copy (`now64` as the copy's views run), for freshness.
 * Blocks of 5,000 rows by default: the size of our batches at the default fetch size.
 */
export async function kafkaEngineCopy(wh: BenchServices['wh'], brokers: string, topic: string, settings = 'kafka_max_block_size = 5000'): Promise<void> {
  await wh.exec('CREATE DATABASE IF NOT EXISTS kbench');
  await wh.exec('CREATE TABLE kbench.transactions AS default.transactions');
  const views = await wh.query<{ name: string; as_select: string; target: string }>(
    `SELECT name, as_select, extract(create_table_query, ' TO ([^ ]+)') AS target FROM system.tables
     WHERE database = 'default' AND engine = 'MaterializedView' AND position(as_select, 'default.transactions') > 0`,
  );
  for (const v of views) {
    const table = v.target.replace(/^default\./, '');
    await wh.exec(`CREATE TABLE kbench.${table} AS default.${table}`);
    await wh.exec(`CREATE MATERIALIZED VIEW kbench.${v.name} TO kbench.${table} AS ${v.as_select.replace('default.transactions', 'kbench.transactions')}`);
  }
  await wh.exec(`CREATE TABLE kbench.queue (
      signature String, instruction_index UInt16, transaction_index UInt32, slot UInt64, block_time UInt32, program_id String, protocol_name String,
      instruction_type String, fee UInt64, compute_units UInt32, accounts Array(String), accounts_count UInt16, success Bool,
      error_message String, log_messages String, raw_data String)
    ENGINE = Kafka SETTINGS kafka_broker_list = '${brokers}', kafka_topic_list = '${topic}', kafka_group_name = '${topic}-clickhouse',
      kafka_format = 'JSONEachRow', kafka_num_consumers = 1, kafka_skip_broken_messages = 1000, ${settings}`);
  await wh.exec('CREATE TABLE kbench.latency (produced DateTime64(3), stored DateTime64(3)) ENGINE = MergeTree ORDER BY tuple()');
  await wh.exec(`CREATE MATERIALIZED VIEW kbench.queue_mv TO kbench.transactions AS
    SELECT * EXCEPT block_time, toDateTime(block_time, 'UTC') AS block_time FROM kbench.queue`);
  await wh.exec(`CREATE MATERIALIZED VIEW kbench.queue_latency TO kbench.latency AS
    SELECT _timestamp_ms AS produced, now64(3) AS stored FROM kbench.queue`);
}

/** Records the activity query (what getProtocolActivity answers from) counts in `range`, by hour. */
export async function activityTotal(s: BenchServices, range: { gte: number; lte: number }): Promise<number> {
  const buckets = await s.operatorAnalytics.activity(undefined, range, 'hour');
  return buckets.reduce((n, b) => n + b.count, 0);
}

/** How often the freshness runs ask the activity query (ms). */
export const POLL_MS = 25;

/**
 * `count` records published to `topic` at `rate` a second by `npm run produce --live` (block_time
 * = now) as its own process, so it does not compete with the consumer for this process's event
 * loop; `achieved()` waits for it and answers the rate it reached.
 */
export function produceLive(brokers: string, topic: string, count: number, rate: number): { done: Promise<number | null>; achieved(): Promise<number> } {
  const args = ['--brokers', brokers, '--topic', topic, '--count', String(count), '--rate', String(rate), '--live', '--seed', '13', '--quiet'];
  const producer = spawn(process.execPath, ['--import', 'tsx', 'ingest/produce-cli.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  producer.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<number | null>((resolve) => producer.once('exit', (code) => resolve(code)));
  return {
    done,
    async achieved() {
      const code = await done;
      if (code !== 0) throw new Error(`producer exited with ${code}: ${out}`);
      return Number(/\((\d+) records\/s\)/.exec(out)?.[1] ?? NaN);
    },
  };
}

/** The ingest settings under test, from the environment (INGEST_BATCH_ROWS, KAFKA_MAX_BYTES_PER_PARTITION, ...). */
export function ingestEnv(): Record<string, string> {
  const names = [
    'INGEST_BATCH_ROWS',
    'INGEST_CHECKS',
    'INGEST_ENGINE_MIN_RECORDS',
    'KAFKA_MAX_BYTES_PER_PARTITION',
    'KAFKA_TOPIC_PARTITIONS',
    'KAFKA_CONCURRENT_PARTITIONS',
    'INGEST_PARSE_WORKERS',
  ];
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = process.env[n];
    if (v !== undefined) out[n] = v;
  }
  return out;
}
