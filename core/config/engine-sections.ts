// The configuration's sections of where data lives and how it arrives: the listen address,
// the engine (embedded or a server, a cluster), Kafka, ingest and client SQL. Read in this
// order by loadConfig (core/config.ts), so problems are listed in it.
import { availableParallelism, hostname } from 'node:os';
import path from 'node:path';
import { DEMO_DAYS, DEMO_TRICKLE_MAX_PER_MINUTE, SQL_TIMEOUT_SECONDS } from '../limits.ts';
import type { EnvReader } from './env-reader.ts';
import type { Config } from './types.ts';

export function listenSection(r: EnvReader): Pick<Config, 'port' | 'host'> {
  return { port: r.int('PORT', 8080, 0, 65535), host: r.str('HOST') ?? '127.0.0.1' };
}

export function engineSection(r: EnvReader): Pick<Config, 'clickhouse' | 'dataDir' | 'demoRows' | 'demoSeed' | 'demoTrickle'> {
  const url = r.url('CLICKHOUSE_URL', ['http:', 'https:']);
  const cluster = r.str('CLICKHOUSE_CLUSTER');
  if (cluster !== undefined) {
    if (url === undefined) r.problem('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL (the embedded engine is one process, not a cluster)');
    // Rendered into DDL (ON CLUSTER name, Distributed('name', ...)): an identifier only.
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(cluster)) r.problem(`CLICKHOUSE_CLUSTER must be a cluster name of letters, digits and "_", got "${cluster}"`);
  }
  const database = r.str('CLICKHOUSE_DATABASE') ?? 'default';
  if (cluster !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(database)) r.problem(`CLICKHOUSE_DATABASE must be letters, digits and "_" in cluster mode, got "${database}"`);
  const dataDir = path.resolve(r.str('DATA_DIR') ?? './data');
  const demoRows = r.int('DEMO_ROWS', 2_000_000, 0, 10_000_000_000);
  const demoSeed = r.int('DEMO_SEED', 42, 0, 2 ** 31 - 1);
  // By default the demo keeps arriving at the seeded data's own rate (DEMO_ROWS over its
  // DEMO_DAYS), so the current hour looks like the others; 0 turns it off.
  const seededPerMinute = Math.min(DEMO_TRICKLE_MAX_PER_MINUTE, Math.ceil(demoRows / (DEMO_DAYS * 24 * 60)));
  const demoTrickle = {
    perMinute: r.int('DEMO_TRICKLE', seededPerMinute, 0, DEMO_TRICKLE_MAX_PER_MINUTE),
    intervalMs: r.int('DEMO_TRICKLE_INTERVAL_MS', 5000, 10, 3_600_000),
  };
  return {
    clickhouse: { url, user: r.str('CLICKHOUSE_USER') ?? 'default', password: r.raw('CLICKHOUSE_PASSWORD') ?? '', database, cluster },
    dataDir,
    demoRows,
    demoSeed,
    demoTrickle,
  };
}

export function kafkaSection(r: EnvReader): Config['kafka'] {
  const brokersRaw = r.str('KAFKA_BROKERS');
  let brokers: string[] | undefined;
  if (brokersRaw !== undefined) {
    brokers = brokersRaw.split(',').map((b) => b.trim()).filter(Boolean);
    for (const b of brokers) {
      if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(b)) r.problem(`KAFKA_BROKERS entry "${b}" must be host:port`);
    }
    if (brokers.length === 0) r.problem('KAFKA_BROKERS is set but lists no broker');
  }
  const topic = r.topicName('KAFKA_TOPIC', 'solana.instructions');
  const deadLetterTopic = r.topicName('KAFKA_DLQ_TOPIC', `${topic}.dlq`);
  if (deadLetterTopic === topic) r.problem('KAFKA_DLQ_TOPIC must differ from KAFKA_TOPIC');
  const backfillTopic = r.str('KAFKA_BACKFILL_TOPIC') === undefined ? undefined : r.topicName('KAFKA_BACKFILL_TOPIC', '');
  if (backfillTopic !== undefined && (backfillTopic === topic || backfillTopic === deadLetterTopic)) r.problem('KAFKA_BACKFILL_TOPIC must differ from KAFKA_TOPIC and KAFKA_DLQ_TOPIC');
  return {
    brokers,
    topic,
    groupId: r.str('KAFKA_GROUP_ID') ?? 'tx-analytics-ingest',
    clientId: r.str('KAFKA_CLIENT_ID') ?? 'tx-analytics',
    deadLetterTopic,
    partitions: r.int('KAFKA_TOPIC_PARTITIONS', 4, 1, 10_000),
    fromBeginning: r.bool('KAFKA_FROM_BEGINNING', true),
    maxBytesPerPartition: r.int('KAFKA_MAX_BYTES_PER_PARTITION', 4 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024),
    concurrentPartitions: r.int('KAFKA_CONCURRENT_PARTITIONS', 4, 1, 64),
    retryBackoffMs: r.int('KAFKA_RETRY_BACKOFF_MS', 500, 10, 60_000),
    // The broker accepts 6-300 s by default (group.min/max.session.timeout.ms).
    sessionTimeoutMs: r.int('KAFKA_SESSION_TIMEOUT_MS', 30_000, 6_000, 300_000),
    backfillTopic,
  };
}

/** `serverUrl`: CLICKHOUSE_URL, when the engine is a server. */
export function ingestSection(r: EnvReader, serverUrl: string | undefined): Config['ingest'] {
  const maxBodyBytes = r.int('INGEST_MAX_BODY_BYTES', 64 * 1024 * 1024, 1024, 2 ** 31 - 1);
  const maxRecordBytes = r.int('INGEST_MAX_RECORD_BYTES', 256 * 1024, 256, 64 * 1024 * 1024);
  const batchRows = r.int('INGEST_BATCH_ROWS', 10_000, 1, 1_000_000);
  // Parse workers (ingest/parse-pool.ts): the records' JavaScript runs beside the engine's
  // insert, which itself kept 1.5-2 cores busy on a 2-core machine (bench/RESULTS.md, "Parse
  // workers": 2 workers there gained a median 1.14x, within the load's noise). So the default
  // leaves the engine two cores and gives workers what is beyond them: none on 1-2 cores, one
  // on 3, two from 4 on.
  const parseWorkers = r.int('INGEST_PARSE_WORKERS', Math.max(0, Math.min(2, availableParallelism() - 2)), 0, 16);
  // Embedded: one process per data directory, so every journal entry is this process's
  // predecessor's. Server: several ingest processes share the tables; each repairs only
  // its own entries, so the id must be stable across restarts (a host or pod name).
  const metricsPort = r.int('INGEST_METRICS_PORT', 9464, 0, 65535);
  const writerId = r.str('INGEST_WRITER_ID') ?? (serverUrl === undefined ? 'embedded' : hostname());
  return { maxBodyBytes, maxRecordBytes, batchRows, parseWorkers, writerId, metricsPort };
}

/** Client SQL, and the analytics layer's engine time limit read beside it. */
export function sqlSection(r: EnvReader, serverUrl: string | undefined): Pick<Config, 'sql' | 'analyticsTimeoutSeconds'> {
  const timeoutSeconds = r.int('SQL_TIMEOUT_SECONDS', SQL_TIMEOUT_SECONDS, 1, 3600);
  const analyticsTimeoutSeconds = r.int('ANALYTICS_TIMEOUT_SECONDS', 10, 1, 3600);
  const maxMemoryBytes = r.int('SQL_MAX_MEMORY_BYTES', 2 * 1024 ** 3, 16 * 1024 ** 2, 2 ** 50);
  // At least two: one key runs one query at a time, so an abusive key can hold one session, never all.
  const sessions = r.int('SQL_SESSIONS', Math.max(2, availableParallelism() - 1), 1, 64);
  const maxThreads = r.int('SQL_MAX_THREADS', 1, 1, 256);
  const queuePerKey = r.int('SQL_QUEUE_PER_KEY', 2, 0, 100);
  const queueTotal = r.int('SQL_QUEUE_TOTAL', 8, 0, 10_000);
  const user = r.str('CLICKHOUSE_SQL_USER');
  if (user !== undefined && serverUrl === undefined) r.problem('CLICKHOUSE_SQL_USER needs CLICKHOUSE_URL (embedded mode has no users)');
  return {
    analyticsTimeoutSeconds,
    sql: { timeoutSeconds, maxMemoryBytes, sessions, maxThreads, queuePerKey, queueTotal, user, password: r.raw('CLICKHOUSE_SQL_PASSWORD') ?? '' },
  };
}
