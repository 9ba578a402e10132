// Kafka source against a real broker (scripts/kafka.sh): records become queryable through
// the analytics layer, invalid records land in the dead-letter topic with their reasons,
// and a broker restart in mid-stream loses nothing.
import { Partitioners, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { ensureTopics, kafkaClient } from '../../ingest/kafka-client.ts';
import { DLQ_HEADERS } from '../../ingest/kafka-dead-letter.ts';
import { publishLines } from '../../ingest/kafka-producer.ts';
import { backfillSource, KafkaSource } from '../../ingest/kafka-source.ts';
import type { IngestPipeline } from '../../ingest/pipeline.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { demoRecords, tableCounts } from '../support/fixtures.ts';
import { startBroker, waitFor, type TestBroker } from '../../scripts/daemons/kafka-broker.ts';
import { startServices } from '../support/services.ts';

const TOPIC = 'kafka-ingest-test';
const log = createLogger('silent');

let broker: TestBroker;
let s: Awaited<ReturnType<typeof startServices>>;
let source: KafkaSource;
let producer: Producer;
let records: IngestRecord[];

const lines = (rs: readonly object[]): string[] => rs.map((r) => JSON.stringify(r));

// The first start fetches the broker jars (about a minute), hence the long hook timeout.
beforeAll(async () => {
  broker = await startBroker();
  s = await startServices({ KAFKA_BROKERS: broker.brokers, KAFKA_TOPIC: TOPIC, KAFKA_GROUP_ID: 'kafka-ingest-test' });
  const kafka = kafkaClient({ brokers: [broker.brokers], clientId: 'test-producer' }, log);
  await ensureTopics(kafka, [TOPIC], 4);
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  source = new KafkaSource(s.pipeline, log, { ...s.config.kafka, brokers: [broker.brokers], retryBackoffMs: 100 }, {}, s.metrics.kafka);
  await source.start();
  records = await demoRecords(s, 12_000, 21);
}, 240_000);

afterAll(async () => {
  await source?.stop();
  await producer?.disconnect();
  await s?.cleanup();
  await broker?.cleanup();
});

/**
 * Publish half of `rest`, stop the broker for `awayMs`, start it again, publish the other
 * half: every record must be stored exactly once, in the base table and every view, with the
 * producer and the consumer reconnecting on their own.
 */
async function restartMidStream(rest: readonly object[], awayMs: number): Promise<void> {
  const before = (await tableCounts(s)).transactions ?? 0;
  const half = Math.floor(rest.length / 2);
  await publishLines(producer, TOPIC, lines(rest.slice(0, half)));
  await broker.stop();
  if (awayMs > 0) await new Promise((r) => setTimeout(r, awayMs));
  await broker.start();
  await publishLines(producer, TOPIC, lines(rest.slice(half)));
  await waitFor('all records after the restart', async () => ((await tableCounts(s)).transactions ?? 0) >= before + rest.length, 90_000, 500);
  // Let any re-delivery after the restart arrive; it must change nothing.
  await new Promise((r) => setTimeout(r, 1_000));
  const counts = await tableCounts(s);
  expect(counts.transactions).toBe(before + rest.length);
  expect(counts.tx_rid_by_sig).toBe(counts.transactions);
  expect(counts.protocol_hourly).toBe(counts.transactions);
  expect(counts.instruction_hourly).toBe(counts.transactions);
}

describe('kafka source', () => {
  it('stores produced records once and they are queryable through the analytics layer', async () => {
    const first = records.slice(0, 4_000);
    await publishLines(producer, TOPIC, lines(first));
    await waitFor('4000 records stored', () => source.stats().stored >= first.length);

    const counts = await tableCounts(s);
    expect(counts.transactions).toBe(first.length);
    expect(counts.tx_rid_by_sig).toBe(first.length);
    expect(counts.protocol_hourly).toBe(first.length);
    const jupiter = first.filter((r) => r.protocol_name === 'jupiter_v6');
    expect(jupiter.length).toBeGreaterThan(100);
    const stats = await s.operatorAnalytics.protocolStats('jupiter_v6');
    expect(stats.totalTransactions).toBe(jupiter.length);
    expect(stats.totalFees).toBe(jupiter.reduce((n, r) => n + r.fee, 0));
    // Records of inactive protocols are stored but hidden, so look up an active one's.
    const sample = jupiter.find((r) => (r.instruction_index ?? 0) === 0)!;
    const tx = await s.operatorAnalytics.transaction(sample.signature);
    expect(tx).toMatchObject({ signature: sample.signature, protocolName: sample.protocol_name, instructionType: sample.instruction_type });

    // Offsets were committed: nothing is left for the group.
    const admin = kafkaClient({ brokers: [broker.brokers], clientId: 'test-admin' }, log).admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId: 'kafka-ingest-test', topics: [TOPIC] });
    const ends = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    const sum = (xs: { offset: string }[]): number => xs.reduce((n, x) => n + Number(x.offset), 0);
    expect(sum(committed!.partitions)).toBe(sum(ends));
  });

  it('sends invalid records to the dead-letter topic with reasons and keeps consuming', async () => {
    const good = records[4_000]!;
    const bad: { value: string | null; kind: string; reason: RegExp }[] = [
      { value: '{"signature": "not closed', kind: 'not_json', reason: /^not valid JSON/ },
      { value: JSON.stringify({ ...good, fee: -1 }), kind: 'schema', reason: /^fee must be >= 0$/ },
      { value: JSON.stringify({ ...good, protocol_name: 'uniswap_v3' }), kind: 'unknown_protocol', reason: /^unknown protocol_name "uniswap_v3"$/ },
      {
        value: JSON.stringify({ ...good, protocol_name: 'jupiter_v6', program_id: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK' }),
        kind: 'program_mismatch',
        reason: /^program_id "CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK" is the program of raydium_amm_v3, not of jupiter_v6$/,
      },
      { value: JSON.stringify({ ...good, raw_data: 'x'.repeat(300_000) }), kind: 'oversized', reason: /^record is \d+ bytes; the limit is 262144$/ },
      { value: null, kind: 'empty', reason: /^empty message/ },
    ];
    const before = source.stats().stored;
    const sent = await producer.send({
      topic: TOPIC,
      acks: -1,
      messages: [...bad.map((b, i) => ({ key: `bad-${i}`, value: b.value })), { key: good.signature, value: JSON.stringify(good) }],
    });
    expect(sent.length).toBeGreaterThan(0);
    // The valid record after the bad ones is stored: the stream did not stall.
    await waitFor('the valid record after the bad ones', () => source.stats().stored >= before + 1);

    const kafka = kafkaClient({ brokers: [broker.brokers], clientId: 'test-dlq-reader' }, log);
    const reader = kafka.consumer({ groupId: `dlq-reader-${Date.now()}` });
    const seen = new Map<string, { value: Buffer | null; headers: Record<string, string> }>();
    await reader.connect();
    await reader.subscribe({ topics: [`${TOPIC}.dlq`], fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        seen.set(String(message.key), { value: message.value, headers });
      },
    });
    await waitFor(`${bad.length} dead letters`, () => seen.size >= bad.length, 30_000);
    await reader.disconnect();

    bad.forEach((b, i) => {
      const d = seen.get(`bad-${i}`);
      expect(d, `dead letter for bad-${i}`).toBeDefined();
      expect(d!.headers[DLQ_HEADERS.reason]).toMatch(b.reason);
      expect(d!.headers[DLQ_HEADERS.kind]).toBe(b.kind);
      expect(d!.headers[DLQ_HEADERS.topic]).toBe(TOPIC);
      expect(Number(d!.headers[DLQ_HEADERS.partition])).toBeGreaterThanOrEqual(0);
      expect(d!.headers[DLQ_HEADERS.offset]).toMatch(/^\d+$/);
      // The original bytes, untouched, so the record can be fixed and replayed.
      expect(d!.value?.toString('utf8') ?? null).toBe(b.value === null ? '' : b.value);
    });

    // The dead-letter table holds each of them too, with its code and the message's place.
    const table = await s.wh.query<{ position: string; code: string; reason: string }>(
      'SELECT position, code, reason FROM dead_letters WHERE source = {s:String} AND position IN {p:Array(String)}',
      {
        params: {
          s: `kafka:${TOPIC}`,
          p: bad.map((_, i) => `${TOPIC}/${seen.get(`bad-${i}`)!.headers[DLQ_HEADERS.partition]}/${seen.get(`bad-${i}`)!.headers[DLQ_HEADERS.offset]}`),
        },
      },
    );
    expect(table.map((r) => r.code).sort()).toEqual(bad.map((b) => b.kind).sort());
    bad.forEach((b, i) => {
      const d = seen.get(`bad-${i}`)!;
      const row = table.find((r) => r.position === `${TOPIC}/${d.headers[DLQ_HEADERS.partition]}/${d.headers[DLQ_HEADERS.offset]}`);
      expect(row, `dead_letters row for bad-${i}`).toMatchObject({ code: b.kind });
      expect(row!.reason).toMatch(b.reason);
    });

    const metrics = await s.metrics.registry.getSingleMetricAsString('txa_ingest_kafka_dead_letters_total');
    for (const kind of ['not_json', 'schema', 'unknown_protocol', 'program_mismatch', 'oversized', 'empty']) {
      expect(metrics).toContain(`kind="${kind}"} 1`);
    }
    expect(await s.metrics.registry.getSingleMetricAsString('txa_ingest_kafka_consumer_lag')).toContain(`topic="${TOPIC}"`);
  });

  it('loses nothing and duplicates nothing across a broker restart mid-stream', async () => {
    await restartMidStream(records.slice(4_001), 0);
  });

  it('loses nothing and duplicates nothing when the broker is away for 30 s mid-stream, and reports the lag it then works off', {
    timeout: 180_000,
  }, async () => {
    // Longer than the client's own retries (kafkajs gives up on a connection after about
    // 30 s of backoff): the source must come back by itself, not only ride out a blip.
    await restartMidStream(await demoRecords(s, 4_000, 77), 30_000);
    // The lag it worked off is reported per partition, and is back to 0 once caught up.
    const lag = await s.metrics.registry.getSingleMetricAsString('txa_ingest_kafka_consumer_lag');
    const values = [...lag.matchAll(new RegExp(`topic="${TOPIC.replace(/\./g, '\\.')}",partition="\\d+"} (\\d+)`, 'g'))].map((m) => Number(m[1]));
    expect(values.length).toBeGreaterThan(0);
    await waitFor(
      'lag back to 0',
      async () => {
        const text = await s.metrics.registry.getSingleMetricAsString('txa_ingest_kafka_consumer_lag');
        return [...text.matchAll(new RegExp(`topic="${TOPIC.replace(/\./g, '\\.')}",partition="\\d+"} (\\d+)`, 'g'))].every((m) => m[1] === '0');
      },
      30_000,
      500,
    );
  });

  it('keeps its partitions through a slow insert (heartbeats) and retries a failing one with the partition paused', async () => {
    const topic = `${TOPIC}.slow`;
    const kafka = kafkaClient({ brokers: [broker.brokers], clientId: 'test-slow' }, log);
    await ensureTopics(kafka, [topic], 1);
    let calls = 0;
    // The warehouse as seen by the source: the first insert takes longer than the session
    // timeout, the next two fail, then inserts work again.
    const flaky: Pick<IngestPipeline, 'ingest'> = {
      ingest: async (records, source) => {
        calls += 1;
        if (calls === 1) await new Promise((r) => setTimeout(r, 9_000));
        if (calls === 2 || calls === 3) throw new Error('warehouse unavailable (simulated)');
        return s.pipeline.ingest(records, source);
      },
    };
    const slow = new KafkaSource(
      flaky,
      log,
      {
        ...s.config.kafka,
        brokers: [broker.brokers],
        topic,
        deadLetterTopic: `${topic}.dlq`,
        groupId: 'kafka-slow-test',
        sessionTimeoutMs: 6_000,
        retryBackoffMs: 200,
      },
      {},
      s.metrics.kafka,
    );
    const extra = await demoRecords(s, 600, 99);
    try {
      await slow.start();
      await slow.joined;
      await publishLines(producer, topic, lines(extra.slice(0, 300)));
      await waitFor('the slow first batch', () => slow.stats().stored + slow.stats().duplicates >= 300, 60_000);
      await publishLines(producer, topic, lines(extra.slice(300)));
      await waitFor('the batch after two failed inserts', () => slow.stats().stored + slow.stats().duplicates >= 600, 60_000);
      const stats = slow.stats();
      // A 9 s insert under a 6 s session did not cost the partition: no rebalance.
      expect(stats.groupJoins).toBe(1);
      expect(stats.insertErrors).toBe(2);
      expect(stats.stored).toBe(600);
      expect(await s.metrics.registry.getSingleMetricAsString('txa_ingest_kafka_paused_partitions')).toContain(`topic="${topic}"} 0`);
    } finally {
      await slow.stop();
    }
  }, 90_000);

  it('a rebalance in mid-stream (a member joins, another leaves) stores every record once', async () => {
    const topic = `${TOPIC}.rebalance`;
    const kafka = kafkaClient({ brokers: [broker.brokers], clientId: 'test-rebalance' }, log);
    await ensureTopics(kafka, [topic], 4);
    const member = (): KafkaSource =>
      new KafkaSource(s.pipeline, log, {
        ...s.config.kafka,
        brokers: [broker.brokers],
        topic,
        deadLetterTopic: `${topic}.dlq`,
        groupId: 'kafka-rebalance-test',
        sessionTimeoutMs: 6_000,
        maxBytesPerPartition: 65_536,
      });
    const extra = await demoRecords(s, 8_000, 123);
    const before = await tableCounts(s);
    const a = member();
    const b = member();
    try {
      await a.start();
      await a.joined;
      await publishLines(producer, topic, lines(extra), { chunk: 500 });
      await waitFor('member a to store some records', () => a.stats().stored > 0, 30_000, 20);
      // b joins: partitions are split between a and b while batches are in flight ...
      await b.start();
      await b.joined;
      // ... then a leaves: b takes every partition, re-reading what a had not committed.
      await a.stop();
      await waitFor('all records stored', () => a.stats().stored + b.stats().stored >= extra.length, 60_000, 100);
    } finally {
      await a.stop();
      await b.stop();
    }
    // Both members stored part of the stream, so partitions really moved mid-stream.
    expect(a.stats().stored).toBeGreaterThan(0);
    expect(b.stats().stored).toBeGreaterThan(0);
    expect(a.stats().stored + b.stats().stored).toBe(extra.length);
    const counts = await tableCounts(s);
    expect(counts.transactions - before.transactions).toBe(extra.length);
    expect(counts.tx_rid_by_sig).toBe(counts.transactions);
    expect(counts.protocol_hourly).toBe(counts.transactions);
    expect(counts.instruction_hourly).toBe(counts.transactions);
  }, 120_000);

  it('a backfill replaying the topic from its beginning beside live records stores nothing twice and shows its progress', async () => {
    const before = await tableCounts(s);
    const stored = source.stats().stored;
    // The live topic as a backfill (its own group, from the beginning): every record a re-delivery.
    const replay = backfillSource(
      s.pipeline,
      log,
      { ...s.config.kafka, brokers: [broker.brokers], backfillTopic: TOPIC, groupId: 'kafka-ingest-test-replay', retryBackoffMs: 100 },
      {},
      s.metrics.kafka,
    )!;
    const live = await demoRecords(s, 500, 4040);
    try {
      await replay.start();
      await publishLines(producer, TOPIC, lines(live));
      await waitFor('the live records stored', () => source.stats().stored >= stored + live.length, 60_000, 100);
      const mine = () => s.pipeline.backfills.list().find((b) => b.name === `kafka:${TOPIC}`)!;
      await waitFor('the backfill done', () => mine().total !== null && mine().done >= mine().total!, 60_000, 100);
    } finally {
      await replay.stop();
    }
    const progress = s.pipeline.backfills.list().find((b) => b.name === `kafka:${TOPIC}`)!;
    expect(progress.total).toBeGreaterThan(0);
    expect(progress.finishedAt).not.toBeNull();
    const counts = await tableCounts(s);
    expect(counts.transactions - before.transactions).toBe(live.length);
    expect(counts.tx_rid_by_sig).toBe(counts.transactions);
    expect(counts.protocol_hourly).toBe(counts.transactions);
    expect(counts.instruction_hourly).toBe(counts.transactions);
    // An independent count: one row per identity in the base table.
    const [distinct] = await s.wh.query<{ n: string }>('SELECT uniqExact(signature, instruction_index) AS n FROM transactions');
    expect(Number(distinct!.n)).toBe(counts.transactions);
  }, 120_000);
});
