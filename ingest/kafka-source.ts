// The Kafka source of the one ingest pipeline. Each fetched batch (thousands of records of
// one partition) becomes ONE pipeline.ingest call; the batch's offsets are committed only
// after that call resolved, i.e. after the warehouse confirmed the insert, and after the
// rejected records reached the dead-letter topic. A crash anywhere before the commit
// re-delivers the batch, and the pipeline's identity de-duplication turns the replay into
// a no-op (docs/kafka.md explains why, and where that stops holding).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { Registry } from 'prom-client';
import type { Config } from '../core/config/load-config.ts';
import type { Logger } from '../core/logger.ts';
import {
  KAFKA_FETCH_MAX_WAIT_MS,
  KAFKA_FETCH_MIN_BYTES,
  KAFKA_FETCH_MIN_MAX_BYTES,
  KAFKA_HEARTBEAT_EVERY_MS,
  KAFKA_MAX_BACKOFF_MS,
  KAFKA_MIN_HEARTBEAT_INTERVAL_MS,
  KAFKA_REBALANCE_TIMEOUT_MS,
} from '../core/limits/ingest.ts';
import { KafkaMetrics } from '../core/metrics.ts';
import { ensureTopics, kafkaClient } from './kafka-client.ts';
import { DeadLetterPublisher, type DeadLetterInput } from './kafka-dead-letter.ts';
import type { IngestPipeline, IngestReport, Lane, RawRecord, Rejection } from './pipeline.ts';
import type { BackfillProgress } from './backfills.ts';

export type KafkaSourceOptions = Omit<Config['kafka'], 'brokers'> & {
  brokers: readonly string[];
  /** 'backfill': a topic replayed from its beginning, in the pipeline's backfill lane, its
   *  progress (records of the topic as it was at start) in progress; default 'live'. */
  lane?: Lane;
  progress?: BackfillProgress;
};

/** A batch whose rows are stored (queryable) and whose offsets are committed. */
export interface StoredBatch {
  topic: string;
  partition: number;
  storedAt: number;
  /** The batch's messages that were not rejected. */
  messages: readonly KafkaMessage[];
}

export interface KafkaSourceHooks {
  /** Called after each committed batch; the benchmark measures freshness with it. */
  onStored?: (batch: StoredBatch) => void;
  /** The consumer stopped for good (an error kafkajs does not restart after). */
  onFatal?: (err: Error) => void;
}

export interface KafkaSourceStats {
  batches: number;
  /** New rows stored. */
  stored: number;
  /** Re-delivered records that were already stored (no effect). */
  duplicates: number;
  deadLettered: number;
  insertErrors: number;
  /** Times this consumer joined its group (1 = never rebalanced since start). */
  groupJoins: number;
}

const BLOCK_TIME_KEY = Buffer.from('"block_time":');
const NO_VALUE = Buffer.alloc(0);

/** block_time of a JSON record without parsing it again (the pipeline already did). */
function blockTimeOf(value: Buffer): number | undefined {
  const at = value.indexOf(BLOCK_TIME_KEY);
  if (at < 0) return undefined;
  let i = at + BLOCK_TIME_KEY.length;
  while (value[i] === 0x20) i += 1;
  let n = 0;
  let digits = 0;
  for (; i < value.length; i += 1) {
    const c = value[i]!;
    if (c < 0x30 || c > 0x39) break;
    n = n * 10 + (c - 0x30);
    digits += 1;
  }
  return digits > 0 ? n : undefined;
}

export class KafkaSource {
  private readonly kafka: Kafka;
  private consumer: Consumer | undefined;
  private producer: Producer | undefined;
  private deadLetters: DeadLetterPublisher | undefined;
  private readonly counters: KafkaSourceStats = { batches: 0, stored: 0, duplicates: 0, deadLettered: 0, insertErrors: 0, groupJoins: 0 };
  private joinedOnce: (() => void) | undefined;
  /** Resolves when the consumer first joined its group and got its partitions. */
  readonly joined: Promise<void> = new Promise((resolve) => (this.joinedOnce = resolve));

  constructor(
    private readonly pipeline: Pick<IngestPipeline, 'ingest'>,
    private readonly log: Logger,
    private readonly options: KafkaSourceOptions,
    private readonly hooks: KafkaSourceHooks = {},
    /** Where the measurements go: the process's registry (Metrics.kafka); a private one when not given. */
    private readonly metrics: KafkaMetrics = new KafkaMetrics(new Registry()),
  ) {
    this.kafka = kafkaClient(options, log.child({ component: 'kafka' }));
  }

  stats(): Readonly<KafkaSourceStats> {
    return { ...this.counters };
  }

  /** Join the consumer group and start consuming; resolves once consumption has begun. */
  async start(): Promise<void> {
    const { topic, deadLetterTopic, partitions, groupId } = this.options;
    await ensureTopics(this.kafka, [topic, deadLetterTopic], partitions);
    if (this.options.progress !== undefined) await this.measureBackfill(this.options.progress);
    this.producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await this.producer.connect();
    this.deadLetters = new DeadLetterPublisher(this.producer, deadLetterTopic, this.metrics);

    const consumer = this.kafka.consumer({
      groupId,
      // A slow insert cannot get the member evicted: heartbeats continue during the insert
      // (see handleBatch). A shorter session lets a crashed member's partitions move sooner.
      sessionTimeout: this.options.sessionTimeoutMs,
      rebalanceTimeout: KAFKA_REBALANCE_TIMEOUT_MS,
      heartbeatInterval: Math.max(KAFKA_MIN_HEARTBEAT_INTERVAL_MS, Math.floor(this.options.sessionTimeoutMs / 10)),
      maxBytesPerPartition: this.options.maxBytesPerPartition,
      maxBytes: Math.max(this.options.maxBytesPerPartition, KAFKA_FETCH_MIN_MAX_BYTES),
      // Wait briefly for a fuller batch: fewer, larger inserts suit ClickHouse.
      minBytes: KAFKA_FETCH_MIN_BYTES,
      maxWaitTimeInMs: KAFKA_FETCH_MAX_WAIT_MS,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (e) => {
      // Retriable errors (a broker restart) restart the consumer by itself; others end it.
      this.log.error({ err: e.payload.error, restart: e.payload.restart, groupId }, 'kafka consumer crashed');
      if (!e.payload.restart) this.hooks.onFatal?.(e.payload.error);
    });
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      this.log.info({ groupId, assignment: e.payload.memberAssignment }, 'kafka consumer joined the group');
      this.counters.groupJoins += 1;
      this.joinedOnce?.();
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: this.options.fromBeginning });
    await consumer.run({
      // Offsets are committed by hand, only after the warehouse confirmed the insert.
      autoCommit: false,
      eachBatchAutoResolve: false,
      // The pipeline serialises writes per process anyway; one batch at a time keeps
      // memory bounded to one fetch and makes the await below the back-pressure.
      // The pipeline serialises inserts; parsing and validating other partitions' batches
      // meanwhile keeps the engine busy. Offsets are still committed per partition, each
      // only after its own batch is stored.
      partitionsConsumedConcurrently: this.options.concurrentPartitions,
      eachBatch: (payload) => this.handleBatch(payload),
    });
    this.log.info({ topic, groupId, deadLetterTopic, brokers: this.options.brokers }, 'kafka source started');
  }

  /** A backfill's total: the records the topic holds now (what a replay from the beginning covers). */
  private async measureBackfill(progress: BackfillProgress): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(this.options.topic);
      progress.setTotal(offsets.reduce((n, o) => n + Number(BigInt(o.high) - BigInt(o.low)), 0));
    } finally {
      await admin.disconnect();
    }
  }

  /** Leave the group after the batches in flight are stored and committed. */
  async stop(): Promise<void> {
    // disconnect() waits for the running eachBatch to return, and that commits what it wrote.
    await this.consumer?.disconnect();
    await this.producer?.disconnect();
    this.consumer = undefined;
    this.producer = undefined;
    this.log.info({ ...this.counters }, 'kafka source stopped');
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    if (batch.isEmpty()) return;
    const byOffset = new Map<string, KafkaMessage>();
    const records: RawRecord[] = [];
    for (const m of batch.messages) {
      byOffset.set(m.offset, m);
      // A tombstone (no value) is refused 'empty' by the pipeline, kept in the dead-letter table and topic like any refusal.
      records.push({ value: m.value ?? NO_VALUE, position: { topic, partition, offset: m.offset } });
    }
    const report = await this.storeUntilDone(payload, records);
    // Stopping or re-seeked: the batch stays uncommitted; it is re-delivered later.
    if (report === undefined) return;

    const rejected = report.rejected;
    // Every position here is a message of this batch (one topic and partition): its offset names it.
    const offsetOf = (r: Rejection): string => ('offset' in r.position ? r.position.offset : '');
    const deadSet = new Set(rejected.map(offsetOf));
    const dead: DeadLetterInput[] = rejected.flatMap((rejection) => {
      const message = byOffset.get(offsetOf(rejection));
      return message === undefined ? [] : [{ rejection, message, topic, partition }];
    });
    // The dead letters must be durable before the offsets move past them.
    await this.deadLetters?.publish(dead);

    const last = batch.lastOffset();
    payload.resolveOffset(last);
    await payload.commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition, offset: (BigInt(last) + 1n).toString() }] }],
    });
    this.measureStored(batch, report, { rejected: rejected.length, deadLettered: dead.length, deadSet });
  }

  /** The batch's records stored, retried while the warehouse fails (the partition paused
   *  meanwhile, heartbeats going on); undefined when the consumer stops or the batch goes stale. */
  private async storeUntilDone(payload: EachBatchPayload, records: RawRecord[]): Promise<IngestReport | undefined> {
    const { topic, partition } = payload.batch;
    const labels = { topic };
    // Heartbeat while the warehouse works, so a slow insert does not look like a dead member.
    const beat = setInterval(() => {
      payload.heartbeat().catch(() => undefined);
    }, KAFKA_HEARTBEAT_EVERY_MS);
    let resume: (() => void) | undefined;
    try {
      let delay = this.options.retryBackoffMs;
      for (;;) {
        // Stopping or re-seeked: leave the batch uncommitted; it is re-delivered later.
        if (!payload.isRunning() || payload.isStale()) return undefined;
        const t0 = performance.now();
        try {
          const report = await this.pipeline.ingest(records, `kafka:${topic}`, { lane: this.options.lane ?? 'live' });
          this.metrics.insertSeconds.observe(labels, (performance.now() - t0) / 1000);
          return report;
        } catch (err) {
          // The warehouse is down or overloaded: stop fetching this partition (back-pressure)
          // and retry the same batch with a growing delay; nothing is committed meanwhile.
          this.counters.insertErrors += 1;
          this.metrics.insertErrors.inc(labels);
          if (resume === undefined) {
            resume = payload.pause();
            this.metrics.paused.inc(labels);
          }
          this.log.warn({ err, topic, partition, retryInMs: delay }, 'warehouse insert failed; partition paused, retrying');
          await sleep(delay);
          delay = Math.min(delay * 2, KAFKA_MAX_BACKOFF_MS);
        }
      }
    } finally {
      clearInterval(beat);
      if (resume !== undefined) {
        resume();
        this.metrics.paused.dec(labels);
      }
    }
  }

  /** A committed batch's counters, metrics (outcomes, lag, freshness) and the onStored hook. */
  private measureStored(
    batch: EachBatchPayload['batch'],
    report: IngestReport,
    outcome: { rejected: number; deadLettered: number; deadSet: ReadonlySet<string> },
  ): void {
    const { topic, partition } = batch;
    const labels = { topic };
    const stored = report.accepted;
    this.counters.batches += 1;
    this.counters.stored += stored;
    this.counters.duplicates += report.duplicates;
    this.counters.deadLettered += outcome.deadLettered;
    this.options.progress?.add(batch.messages.length);
    this.metrics.batches.inc(labels);
    this.metrics.batchRecords.observe(labels, batch.messages.length);
    this.metrics.records.inc({ topic, outcome: 'accepted' }, stored);
    this.metrics.records.inc({ topic, outcome: 'duplicate' }, report.duplicates);
    this.metrics.records.inc({ topic, outcome: 'rejected' }, outcome.rejected);
    this.metrics.lag.set({ topic, partition: String(partition) }, Number(BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n));
    const nowMs = Date.now();
    const storedMessages: KafkaMessage[] = [];
    for (const m of batch.messages) {
      if (m.value === null || outcome.deadSet.has(m.offset)) continue;
      storedMessages.push(m);
      this.metrics.freshnessProduce.observe(labels, Math.max(0, (nowMs - Number(m.timestamp)) / 1000));
      const bt = blockTimeOf(m.value);
      if (bt !== undefined) this.metrics.freshnessBlockTime.observe(labels, Math.max(0, nowMs / 1000 - bt));
    }
    this.hooks.onStored?.({ topic, partition, storedAt: nowMs, messages: storedMessages });
  }
}

/**
 * The backfill source beside the live one (KAFKA_BACKFILL_TOPIC): the topic replayed from its
 * beginning in the pipeline's backfill lane, under its own group (`<group>-backfill`) and
 * dead-letter topic, its progress among the pipeline's backfills. undefined when unset.
 */
export function backfillSource(
  pipeline: Pick<IngestPipeline, 'ingest' | 'backfills'>,
  log: Logger,
  options: KafkaSourceOptions,
  hooks: KafkaSourceHooks,
  metrics: KafkaMetrics,
): KafkaSource | undefined {
  const topic = options.backfillTopic;
  if (topic === undefined) return undefined;
  return new KafkaSource(
    pipeline,
    log,
    {
      ...options,
      topic,
      deadLetterTopic: `${topic}.dlq`,
      groupId: `${options.groupId}-backfill`,
      fromBeginning: true,
      // One partition's batch in hand at a time: the parse of a replay's batches shares the one
      // JavaScript thread with the live source's, which the writer's lanes do not order.
      concurrentPartitions: 1,
      lane: 'backfill',
      progress: pipeline.backfills.start(`kafka:${topic}`, null),
    },
    hooks,
    metrics,
  );
}
