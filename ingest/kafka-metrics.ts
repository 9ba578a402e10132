// Measurements of the Kafka source, registered on prom-client's default registry so they
// appear on GET /metrics beside the API's own metrics (names prefixed txa_ingest_kafka_).
// Created once per process: the default registry rejects a second metric of one name,
// and a process may start more than one source (tests, the benchmark).
import { Counter, Gauge, Histogram, register, type Metric } from 'prom-client';

const PREFIX = 'txa_ingest_kafka_';

function once<M extends Metric>(name: string, make: (fullName: string) => M): M {
  const fullName = PREFIX + name;
  return (register.getSingleMetric(fullName) as M | undefined) ?? make(fullName);
}

export type RecordOutcome = 'accepted' | 'duplicate' | 'rejected';
export type RejectKind = 'not_json' | 'schema' | 'unknown_protocol' | 'program_mismatch' | 'oversized' | 'empty';

export const kafkaMetrics = {
  /** rate() of this gives records/s accepted, re-delivered (duplicate) and rejected. */
  records: once('records_total', (name) => new Counter({
    name, help: 'Kafka records processed, by outcome', labelNames: ['topic', 'outcome'] as const,
  })),
  deadLetters: once('dead_letters_total', (name) => new Counter({
    name, help: 'Records published to the dead-letter topic, by kind of rejection', labelNames: ['topic', 'kind'] as const,
  })),
  batches: once('batches_total', (name) => new Counter({
    name, help: 'Kafka batches stored and committed', labelNames: ['topic'] as const,
  })),
  insertErrors: once('insert_errors_total', (name) => new Counter({
    name, help: 'Warehouse inserts that failed and were retried (the partition is paused meanwhile)', labelNames: ['topic'] as const,
  })),
  insertSeconds: once('batch_insert_seconds', (name) => new Histogram({
    name, help: 'Time for one pipeline.ingest of a Kafka batch (validate, de-duplicate, insert)',
    labelNames: ['topic'] as const, buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  })),
  batchRecords: once('batch_records', (name) => new Histogram({
    name, help: 'Records per Kafka batch handed to the pipeline',
    labelNames: ['topic'] as const, buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000],
  })),
  lag: once('consumer_lag', (name) => new Gauge({
    name, help: 'Records between the committed position and the high watermark, per partition',
    labelNames: ['topic', 'partition'] as const,
  })),
  paused: once('paused_partitions', (name) => new Gauge({
    name, help: 'Partitions paused because the warehouse is failing or slow', labelNames: ['topic'] as const,
  })),
  freshnessBlockTime: once('freshness_block_time_seconds', (name) => new Histogram({
    name, help: 'Now minus the record block_time when its batch is stored (end-to-end freshness)',
    labelNames: ['topic'] as const, buckets: [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 86400],
  })),
  freshnessProduce: once('freshness_produce_seconds', (name) => new Histogram({
    name, help: 'Now minus the Kafka produce timestamp when the record is stored',
    labelNames: ['topic'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  })),
};

/** Sort a pipeline rejection reason into a low-cardinality label. */
export function rejectKind(reason: string): RejectKind {
  if (reason.startsWith('record is ') && reason.includes('the limit is')) return 'oversized';
  if (reason.startsWith('empty message')) return 'empty';
  if (reason.startsWith('not valid JSON')) return 'not_json';
  if (reason.startsWith('unknown protocol_name')) return 'unknown_protocol';
  if (reason.startsWith('program_id "')) return 'program_mismatch';
  return 'schema';
}
