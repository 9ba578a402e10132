// Publishing ingest records (NDJSON lines) to the topic, keyed by signature so that every
// instruction of one transaction lands in one partition (the de-duplication argument in
// docs/kafka.md relies on that), at a steady rate. Shared by the producer CLI, the tests
// and the benchmark.
import { KAFKA_PUBLISH_CHUNK } from '../core/limits/ingest.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message, Producer } from 'kafkajs';

const SIG_FIELD = '"signature":"';

/** The signature of a record line, found without parsing the line as JSON. */
export function signatureKey(line: string): string | undefined {
  const at = line.indexOf(SIG_FIELD);
  if (at < 0) return undefined;
  const start = at + SIG_FIELD.length;
  const end = line.indexOf('"', start);
  return end > start ? line.slice(start, end) : undefined;
}

/** Releases records at `ratePerSecond` (0 = unlimited), measured from the first take. */
export class Pacer {
  private t0 = 0;
  private released = 0;

  constructor(private readonly ratePerSecond: number) {}

  /** Wait until `n` more records may go: a chunk leaves when the ones before it are due. */
  async take(n: number): Promise<void> {
    if (this.t0 === 0) this.t0 = performance.now();
    const due = this.ratePerSecond > 0 ? this.t0 + (this.released / this.ratePerSecond) * 1000 : 0;
    this.released += n;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
  }
}

export interface PublishOptions {
  pacer?: Pacer;
  /** Messages per produce request. */
  chunk?: number;
  /** Produce requests awaiting their acknowledgement at once. */
  inFlight?: number;
  onSent?: (count: number) => void;
}

/** Publish lines in order of chunks; resolves when every one is acknowledged (acks=all). */
export async function publishLines(producer: Producer, topic: string, lines: readonly string[], options: PublishOptions = {}): Promise<void> {
  const chunk = options.chunk ?? KAFKA_PUBLISH_CHUNK;
  const inFlight = options.inFlight ?? 8;
  const pending = new Set<Promise<void>>();
  for (let i = 0; i < lines.length; i += chunk) {
    const slice = lines.slice(i, i + chunk);
    await options.pacer?.take(slice.length);
    const messages: Message[] = slice.map((value) => ({ key: signatureKey(value) ?? null, value }));
    const p: Promise<void> = producer.send({ topic, acks: -1, messages }).then(() => {
      pending.delete(p);
      options.onSent?.(slice.length);
    });
    pending.add(p);
    if (pending.size >= inFlight) await Promise.race(pending);
  }
  await Promise.all(pending);
}
