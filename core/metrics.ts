// The process's one Prometheus registry and every measurement on it: HTTP, access, the
// warehouse, the ingest pipeline and the Kafka source, whichever process runs them (the API
// with Kafka in-process, or the standalone ingest process). Each instance has its own
// registry (not prom-client's global one), so several services in one process, as in the
// tests, never clash. No label ever carries a key id or key name: label values stay few
// and secrets stay out.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BackfillState, IngestObserver, IngestStage, WarehouseObserver } from './observers.ts';
import {
  BATCH_ROWS_BUCKETS,
  FRESHNESS_BLOCK_SECONDS_BUCKETS,
  FRESHNESS_PRODUCE_SECONDS_BUCKETS,
  HTTP_SECONDS_BUCKETS,
  INGEST_FRESHNESS_SECONDS_BUCKETS,
  INGEST_STAGE_SECONDS_BUCKETS,
  KAFKA_BATCH_RECORDS_BUCKETS,
  KAFKA_INSERT_SECONDS_BUCKETS,
  STATEMENT_SECONDS_BUCKETS,
} from './limits/metrics.ts';

export type FreshnessProbe = () => Promise<{ newestBlockTime: number | null; newestIngestedAt: number | null }>;

export class Metrics implements WarehouseObserver, IngestObserver {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'txa_http_requests_total',
    help: 'HTTP requests answered, by interface, route pattern, HTTP method and status',
    labelNames: ['interface', 'route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'txa_http_request_duration_seconds',
    help: 'HTTP request latency, by interface, route pattern, HTTP method and status',
    labelNames: ['interface', 'route', 'method', 'status'] as const,
    buckets: HTTP_SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'txa_rate_limit_rejections_total',
    help: 'Requests answered 429, by plan ("anonymous" = per-IP limit without a valid key, "operator" = per-address budget of wrong operator tokens)',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  readonly authFailures = new Counter({
    name: 'txa_auth_failures_total',
    help: 'Requests refused for their credentials: API key missing (401) or invalid/inactive/revoked (403); operator_token = a wrong admin or metrics token (403)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly warehouseDuration = new Histogram({
    name: 'txa_warehouse_query_duration_seconds',
    help: 'Warehouse call latency by operation (query, query_text, stream, insert, exec) and outcome',
    labelNames: ['operation', 'outcome'] as const,
    buckets: STATEMENT_SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly ingestRecords = new Counter({
    name: 'txa_ingest_records_total',
    help: 'Ingested records by source and outcome (accepted, rejected, duplicate)',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly ingestBatchRows = new Histogram({
    name: 'txa_ingest_batch_rows',
    help: 'Rows per insert batch written by the ingest pipeline',
    buckets: BATCH_ROWS_BUCKETS,
    registers: [this.registry],
  });

  readonly ingestDeadLetters = new Counter({
    name: 'txa_ingest_dead_letters_total',
    help: 'Records refused by the ingest pipeline (kept in the dead-letter table), by source and rejection code',
    labelNames: ['source', 'code'] as const,
    registers: [this.registry],
  });

  readonly ingestStageSeconds = new Histogram({
    name: 'txa_ingest_stage_seconds',
    help: "Time in each ingest stage: parse (a call's parse and checks), queue (a chunk's wait for the writer), then per batch dedupe, journal, insert, notify",
    labelNames: ['stage'] as const,
    buckets: INGEST_STAGE_SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly ingestFreshness = new Histogram({
    name: 'txa_ingest_freshness_seconds',
    help: 'Received by the ingest pipeline -> queryable, per handed chunk, by lane (live, backfill)',
    labelNames: ['lane'] as const,
    buckets: INGEST_FRESHNESS_SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly backfillDone = new Gauge({
    name: 'txa_ingest_backfill_done_records',
    help: 'Records a backfill has done (stored, duplicate or rejected), by backfill',
    labelNames: ['backfill'] as const,
    registers: [this.registry],
  });

  readonly backfillTotal = new Gauge({
    name: 'txa_ingest_backfill_total_records',
    help: 'Records a backfill will have done when finished, by backfill (absent while unknown)',
    labelNames: ['backfill'] as const,
    registers: [this.registry],
  });

  /** The Kafka source's measurements (txa_ingest_kafka_*), on this same registry. */
  readonly kafka = new KafkaMetrics(this.registry);

  readonly usageFlushFailures = new Counter({
    name: 'txa_usage_flush_failures_total',
    help: 'Failed writes of buffered per-key usage rows (they are retried at the next flush)',
    registers: [this.registry],
  });

  constructor(freshness?: FreshnessProbe) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's defaults include three gauges named like counters (Prometheus reserves
    // `_total` for counters; `promtool check metrics` warns): their per-type gauges remain,
    // `sum(nodejs_active_handles)` is the total.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
    if (freshness) this.addFreshness(freshness);
  }

  /** Data freshness, read at scrape time (the probe reads one tiny table). */
  addFreshness(probe: FreshnessProbe): void {
    new Gauge({
      name: 'txa_data_freshness_seconds',
      help: 'Seconds since the newest stored record: kind=block_time (chain time) or kind=ingested_at (arrival time); absent when no data',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          const f = await probe();
          const now = Date.now() / 1000;
          if (f.newestBlockTime !== null) this.set({ kind: 'block_time' }, Math.max(0, now - f.newestBlockTime));
          if (f.newestIngestedAt !== null) this.set({ kind: 'ingested_at' }, Math.max(0, now - f.newestIngestedAt));
        } catch {
          // An unreachable engine shows as missing series here and as a failing /health.
        }
      },
    });
  }

  observeWarehouse(operation: string, seconds: number, ok: boolean): void {
    this.warehouseDuration.observe({ operation, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  observeIngest(source: string, accepted: number, rejected: number, duplicates: number): void {
    if (accepted > 0) this.ingestRecords.inc({ source, outcome: 'accepted' }, accepted);
    if (duplicates > 0) this.ingestRecords.inc({ source, outcome: 'duplicate' }, duplicates);
    if (rejected > 0) this.ingestRecords.inc({ source, outcome: 'rejected' }, rejected);
  }

  observeBatch(rows: number): void {
    this.ingestBatchRows.observe(rows);
  }

  observeDeadLetters(source: string, code: string, count: number): void {
    this.ingestDeadLetters.inc({ source, code }, count);
  }

  observeStage(stage: IngestStage, seconds: number): void {
    this.ingestStageSeconds.observe({ stage }, seconds);
  }

  observeFreshness(lane: string, seconds: number): void {
    this.ingestFreshness.observe({ lane }, seconds);
  }

  observeBackfill(state: BackfillState): void {
    this.backfillDone.set({ backfill: state.name }, state.done);
    if (state.total !== null) this.backfillTotal.set({ backfill: state.name }, state.total);
  }
}

/** Measurements of the Kafka source (names prefixed txa_ingest_kafka_). */
export class KafkaMetrics {
  /** rate() of this gives records/s accepted, re-delivered (duplicate) and rejected. */
  readonly records: Counter<'topic' | 'outcome'>;
  readonly deadLetters: Counter<'topic' | 'kind'>;
  readonly batches: Counter<'topic'>;
  readonly insertErrors: Counter<'topic'>;
  readonly insertSeconds: Histogram<'topic'>;
  readonly batchRecords: Histogram<'topic'>;
  readonly lag: Gauge<'topic' | 'partition'>;
  readonly paused: Gauge<'topic'>;
  readonly freshnessBlockTime: Histogram<'topic'>;
  readonly freshnessProduce: Histogram<'topic'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const name = (n: string): string => `txa_ingest_kafka_${n}`;
    this.records = new Counter({ name: name('records_total'), help: 'Kafka records processed, by outcome', labelNames: ['topic', 'outcome'], registers });
    this.deadLetters = new Counter({
      name: name('dead_letters_total'),
      help: 'Records published to the dead-letter topic, by kind of rejection',
      labelNames: ['topic', 'kind'],
      registers,
    });
    this.batches = new Counter({ name: name('batches_total'), help: 'Kafka batches stored and committed', labelNames: ['topic'], registers });
    this.insertErrors = new Counter({
      name: name('insert_errors_total'),
      help: 'Warehouse inserts that failed and were retried (the partition is paused meanwhile)',
      labelNames: ['topic'],
      registers,
    });
    this.insertSeconds = new Histogram({
      name: name('batch_insert_seconds'),
      help: 'Time for one pipeline.ingest of a Kafka batch (validate, de-duplicate, insert)',
      labelNames: ['topic'],
      buckets: KAFKA_INSERT_SECONDS_BUCKETS,
      registers,
    });
    this.batchRecords = new Histogram({
      name: name('batch_records'),
      help: 'Records per Kafka batch handed to the pipeline',
      labelNames: ['topic'],
      buckets: KAFKA_BATCH_RECORDS_BUCKETS,
      registers,
    });
    this.lag = new Gauge({
      name: name('consumer_lag'),
      help: 'Records between the committed position and the high watermark, per partition',
      labelNames: ['topic', 'partition'],
      registers,
    });
    this.paused = new Gauge({
      name: name('paused_partitions'),
      help: 'Partitions paused because the warehouse is failing or slow',
      labelNames: ['topic'],
      registers,
    });
    this.freshnessBlockTime = new Histogram({
      name: name('freshness_block_time_seconds'),
      help: 'Now minus the record block_time when its batch is stored (end-to-end freshness)',
      labelNames: ['topic'],
      buckets: FRESHNESS_BLOCK_SECONDS_BUCKETS,
      registers,
    });
    this.freshnessProduce = new Histogram({
      name: name('freshness_produce_seconds'),
      help: 'Now minus the Kafka produce timestamp when the record is stored',
      labelNames: ['topic'],
      buckets: FRESHNESS_PRODUCE_SECONDS_BUCKETS,
      registers,
    });
  }
}
