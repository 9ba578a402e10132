// The configuration's sections of where data lives and how it arrives: the listen address,
// the engine (embedded or a server, a cluster), Kafka, ingest and client SQL. Read in this
// order by loadConfig (load-config.ts) from the variables of env-schema.ts, each already of its
// type and within its bounds: what is checked here spans variables or is computed.
import { availableParallelism, hostname } from 'node:os';
import path from 'node:path';
import { DEMO_DAYS, DEMO_TRICKLE_MAX_PER_MINUTE } from '../limits/ingest.ts';
import type { Problems } from './env-reader.ts';
import type { EnvVars } from './env-schema.ts';
import type { Config } from './types.ts';

/** A plain identifier: rendered into DDL (ON CLUSTER name, Distributed('name', ...)). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

export function listenSection(v: EnvVars): Pick<Config, 'port' | 'host'> {
  return { port: v.PORT, host: v.HOST };
}

export function engineSection(v: EnvVars, p: Problems): Pick<Config, 'clickhouse' | 'dataDir' | 'demoRows' | 'demoSeed' | 'demoTrickle'> {
  const url = v.CLICKHOUSE_URL;
  const cluster = v.CLICKHOUSE_CLUSTER;
  if (cluster !== undefined) {
    if (url === undefined) p.add('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL (the embedded engine is one process, not a cluster)');
    if (!IDENTIFIER.test(cluster)) p.add(`CLICKHOUSE_CLUSTER must be a cluster name of letters, digits and "_", got "${cluster}"`);
  }
  const database = v.CLICKHOUSE_DATABASE;
  if (cluster !== undefined && !IDENTIFIER.test(database)) p.add(`CLICKHOUSE_DATABASE must be letters, digits and "_" in cluster mode, got "${database}"`);
  const demoRows = v.DEMO_ROWS;
  // By default the demo keeps arriving at the seeded data's own rate (DEMO_ROWS over its
  // DEMO_DAYS), so the current hour looks like the others; 0 turns it off.
  const seededPerMinute = Math.min(DEMO_TRICKLE_MAX_PER_MINUTE, Math.ceil(demoRows / (DEMO_DAYS * 24 * 60)));
  return {
    clickhouse: { url, user: v.CLICKHOUSE_USER, password: v.CLICKHOUSE_PASSWORD, database, cluster },
    dataDir: path.resolve(v.DATA_DIR),
    demoRows,
    demoSeed: v.DEMO_SEED,
    demoTrickle: { perMinute: v.DEMO_TRICKLE ?? seededPerMinute, intervalMs: v.DEMO_TRICKLE_INTERVAL_MS },
  };
}

export function kafkaSection(v: EnvVars, p: Problems): Config['kafka'] {
  const topic = v.KAFKA_TOPIC;
  const deadLetterTopic = v.KAFKA_DLQ_TOPIC ?? `${topic}.dlq`;
  if (v.KAFKA_DLQ_TOPIC === undefined && !TOPIC.test(deadLetterTopic))
    p.add(`KAFKA_DLQ_TOPIC must be 1-249 characters of letters, digits, ".", "_" or "-", got "${deadLetterTopic}"`);
  if (deadLetterTopic === topic) p.add('KAFKA_DLQ_TOPIC must differ from KAFKA_TOPIC');
  const backfillTopic = v.KAFKA_BACKFILL_TOPIC;
  if (backfillTopic !== undefined && (backfillTopic === topic || backfillTopic === deadLetterTopic))
    p.add('KAFKA_BACKFILL_TOPIC must differ from KAFKA_TOPIC and KAFKA_DLQ_TOPIC');
  return {
    brokers: v.KAFKA_BROKERS,
    topic,
    groupId: v.KAFKA_GROUP_ID,
    clientId: v.KAFKA_CLIENT_ID,
    deadLetterTopic,
    partitions: v.KAFKA_TOPIC_PARTITIONS,
    fromBeginning: v.KAFKA_FROM_BEGINNING,
    maxBytesPerPartition: v.KAFKA_MAX_BYTES_PER_PARTITION,
    concurrentPartitions: v.KAFKA_CONCURRENT_PARTITIONS,
    retryBackoffMs: v.KAFKA_RETRY_BACKOFF_MS,
    sessionTimeoutMs: v.KAFKA_SESSION_TIMEOUT_MS,
    backfillTopic,
  };
}

/** `serverUrl`: CLICKHOUSE_URL, when the engine is a server. */
export function ingestSection(v: EnvVars, serverUrl: string | undefined): Config['ingest'] {
  // Parse workers (ingest/parse-pool.ts): the records' JavaScript runs beside the engine's
  // insert, which itself kept 1.5-2 cores busy on a 2-core machine (bench/RESULTS.md, "Parse
  // workers": 2 workers there gained a median 1.14x, within the load's noise). So the default
  // leaves the engine two cores and gives workers what is beyond them: none on 1-2 cores, one
  // on 3, two from 4 on.
  const parseWorkers = v.INGEST_PARSE_WORKERS ?? Math.max(0, Math.min(2, availableParallelism() - 2));
  // Embedded: one process per data directory, so every journal entry is this process's
  // predecessor's. Server: several ingest processes share the tables; each repairs only
  // its own entries, so the id must be stable across restarts (a host or pod name).
  const writerId = v.INGEST_WRITER_ID ?? (serverUrl === undefined ? 'embedded' : hostname());
  return {
    maxBodyBytes: v.INGEST_MAX_BODY_BYTES,
    maxRecordBytes: v.INGEST_MAX_RECORD_BYTES,
    batchRows: v.INGEST_BATCH_ROWS,
    // Checks in the engine measured 1.4-2.4x the JavaScript path (bench/RESULTS.md, issue 40);
    // they read a staged file, which only the embedded engine can.
    checks: serverUrl === undefined ? v.INGEST_CHECKS : 'javascript',
    engineMinRecords: v.INGEST_ENGINE_MIN_RECORDS,
    parseWorkers,
    writerId,
    metricsPort: v.INGEST_METRICS_PORT,
  };
}

/** Client SQL, and the analytics layer's engine time limit read beside it. */
export function sqlSection(v: EnvVars, p: Problems, serverUrl: string | undefined): Pick<Config, 'sql' | 'analyticsTimeoutSeconds'> {
  // At least two: one key runs one query at a time, so an abusive key can hold one session, never all.
  const sessions = v.SQL_SESSIONS ?? Math.max(2, availableParallelism() - 1);
  const user = v.CLICKHOUSE_SQL_USER;
  if (user !== undefined && serverUrl === undefined) p.add('CLICKHOUSE_SQL_USER needs CLICKHOUSE_URL (embedded mode has no users)');
  return {
    analyticsTimeoutSeconds: v.ANALYTICS_TIMEOUT_SECONDS,
    sql: {
      timeoutSeconds: v.SQL_TIMEOUT_SECONDS,
      maxMemoryBytes: v.SQL_MAX_MEMORY_BYTES,
      sessions,
      maxThreads: v.SQL_MAX_THREADS,
      queuePerKey: v.SQL_QUEUE_PER_KEY,
      queueTotal: v.SQL_QUEUE_TOTAL,
      user,
      password: v.CLICKHOUSE_SQL_PASSWORD,
    },
  };
}
