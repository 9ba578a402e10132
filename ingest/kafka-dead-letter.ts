// The dead-letter topic: every record the pipeline rejected is published there with its
// original bytes as the value and the reason and source coordinates as headers, so an
// operator can inspect, fix and replay it. The source awaits this before committing the
// batch's offsets, so a rejected record is never lost (it may appear twice after a crash).
import type { IHeaders, KafkaMessage, Producer } from 'kafkajs';
import type { Rejection } from './pipeline.ts';
import type { KafkaMetrics } from '../core/metrics.ts';

export const DLQ_HEADERS = {
  reason: 'x-dlq-reason',
  kind: 'x-dlq-kind',
  topic: 'x-source-topic',
  partition: 'x-source-partition',
  offset: 'x-source-offset',
  timestamp: 'x-source-timestamp',
  rejectedAt: 'x-dlq-rejected-at',
  truncated: 'x-dlq-truncated',
} as const;

export interface DeadLetterInput {
  rejection: Rejection;
  message: KafkaMessage;
  topic: string;
  partition: number;
}

export class DeadLetterPublisher {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    private readonly metrics: KafkaMetrics,
    /** Values above this are cut so the broker accepts them (its message.max.bytes). */
    private readonly maxValueBytes = 900 * 1024,
  ) {}

  async publish(items: readonly DeadLetterInput[]): Promise<void> {
    if (items.length === 0) return;
    const now = new Date().toISOString();
    await this.producer.send({
      topic: this.topic,
      acks: -1,
      messages: items.map(({ rejection, message, topic, partition }) => {
        const kind = rejection.code;
        this.metrics.deadLetters.inc({ topic, kind });
        let value = message.value ?? Buffer.alloc(0);
        const headers: IHeaders = {
          [DLQ_HEADERS.reason]: rejection.detail,
          [DLQ_HEADERS.kind]: kind,
          [DLQ_HEADERS.topic]: topic,
          [DLQ_HEADERS.partition]: String(partition),
          [DLQ_HEADERS.offset]: message.offset,
          [DLQ_HEADERS.timestamp]: message.timestamp,
          [DLQ_HEADERS.rejectedAt]: now,
        };
        if (value.byteLength > this.maxValueBytes) {
          headers[DLQ_HEADERS.truncated] = String(value.byteLength);
          value = value.subarray(0, this.maxValueBytes);
        }
        // Same key as the original, so a replay lands in the same partition order.
        return { key: message.key, value, headers };
      }),
    });
  }
}
