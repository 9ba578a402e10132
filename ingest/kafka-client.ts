// One way to reach Kafka for the source, the producer CLI, tests and the benchmark: a
// kafkajs client whose logs go through our pino logger, and idempotent topic creation.
import { KAFKA_CONNECTION_TIMEOUT_MS, KAFKA_RETRIES, KAFKA_RETRY_INITIAL_MS, KAFKA_RETRY_MAX_MS, KAFKA_TOPIC_RETRY_MS } from '../core/limits/ingest.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../core/logger.ts';

export interface KafkaClientOptions {
  brokers: readonly string[];
  clientId: string;
  /** Connection retries before an operation fails (default 30: rides out a broker restart). */
  retries?: number;
}

// kafkajs levels -> pino methods. kafkajs logs every retried connection at ERROR; those
// retries are expected while a broker restarts, so they are downgraded to warn.
function logCreator(log: Logger) {
  return () =>
    (entry: LogEntry): void => {
      const { message, ...extra } = entry.log;
      const fields = { kafka: entry.namespace, ...extra };
      switch (entry.level) {
        case logLevel.ERROR:
        case logLevel.WARN:
          log.warn(fields, message);
          break;
        case logLevel.INFO:
          log.debug(fields, message);
          break;
        default:
          log.trace(fields, message);
      }
    };
}

export function kafkaClient(options: KafkaClientOptions, log: Logger): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: logLevel.INFO,
    logCreator: logCreator(log),
    connectionTimeout: KAFKA_CONNECTION_TIMEOUT_MS,
    // A broker restart takes a few seconds; keep retrying rather than failing the process.
    retry: { initialRetryTime: KAFKA_RETRY_INITIAL_MS, maxRetryTime: KAFKA_RETRY_MAX_MS, retries: options.retries ?? KAFKA_RETRIES },
  });
}

/** Create the topics that do not exist yet; existing topics are left as they are. */
export async function ensureTopics(kafka: Kafka, topics: readonly string[], numPartitions: number): Promise<void> {
  // Right after creating a topic the broker's metadata can still answer "does not host
  // this topic-partition" while kafkajs waits for leaders; that error is retriable, and
  // the next attempt finds the topics created.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await createMissingTopics(kafka, topics, numPartitions);
      return;
    } catch (err) {
      const e = err as { retriable?: boolean; type?: string };
      if (attempt >= 10 || !(e.retriable || e.type === 'UNKNOWN_TOPIC_OR_PARTITION')) throw err;
      await sleep(KAFKA_TOPIC_RETRY_MS);
    }
  }
}

async function createMissingTopics(kafka: Kafka, topics: readonly string[], numPartitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions, replicationFactor: -1 })),
      });
    }
  } catch (err) {
    // Two processes starting together may both try; the loser sees "already exists".
    if (!/already exists/i.test((err as Error).message)) throw err;
  } finally {
    await admin.disconnect();
  }
}
