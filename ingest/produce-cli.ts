// `npm run produce -- --rate 50000 --count 1000000`: publish deterministic demo records
// (the demo generator, seeded) to the Kafka topic, keyed by signature, with progress.
// Records are generated in slices by an embedded engine in a temporary directory, so this
// never touches the service's DATA_DIR; the next slice is generated while one is sent.
import {
  KAFKA_PUBLISH_CHUNK,
  PRODUCE_CHUNKS_PER_SECOND,
  PRODUCE_DEFAULT_COUNT,
  PRODUCE_DEFAULT_SEED,
  PRODUCE_DEFAULT_SLICE,
  PRODUCE_MAX_RATE,
  PRODUCE_MAX_SLICE,
  PRODUCE_MIN_CHUNK,
  PRODUCE_MIN_SLICE,
  PRODUCE_PROGRESS_LOG_MS,
  PRODUCE_PROGRESS_TTY_MS,
  PROGRESS_BAR_CHARS,
} from '../core/limits/ingest.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Partitioners } from 'kafkajs';
import { ConfigError, type Config, loadConfigWith } from '../core/config/load-config.ts';
import { createLogger } from '../core/logger.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { demoRecordsNdjson } from './demo-generator.ts';
import { ensureTopics, kafkaClient } from './kafka-client.ts';
import { Pacer, publishLines } from './kafka-producer.ts';
import { demoWindow } from './seed.ts';

const USAGE = `usage: npm run produce -- [options]
  --count N        records to publish (default 100000)
  --rate N         records per second, 0 = as fast as possible (default 0)
  --seed N         demo generator seed (default 42)
  --offset N       first record number of the data set, to continue a run (default 0)
  --total N        size of the data set the records are drawn from (default offset+count)
  --live           block_time follows the wall clock at the given rate (needs --rate)
  --topic NAME     topic (default KAFKA_TOPIC or solana.instructions)
  --brokers LIST   host:port,... (default KAFKA_BROKERS or 127.0.0.1:9092)
  --slice N        records generated per slice (default 50000)
  --quiet          no progress display`;

class UsageError extends Error {}

interface Flags {
  count: number;
  rate: number;
  seed: number;
  offset: number;
  total: number;
  live: boolean;
  topic: string;
  brokers: string[];
  slice: number;
  quiet: boolean;
  /** Partitions for the topic if it does not exist yet (KAFKA_TOPIC_PARTITIONS). */
  partitions: number;
}

function parseFlags(argv: string[]): Flags {
  const values = (() => {
    try {
      return parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
          count: { type: 'string' },
          rate: { type: 'string' },
          seed: { type: 'string' },
          offset: { type: 'string' },
          total: { type: 'string' },
          live: { type: 'boolean' },
          topic: { type: 'string' },
          brokers: { type: 'string' },
          slice: { type: 'string' },
          quiet: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
      }).values;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const problems: string[] = [];
  const num = (name: keyof typeof values, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = values[name];
    if (raw === undefined) return def;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
      problems.push(`--${name} must be a whole number, got "${String(raw)}"`);
      return def;
    }
    const n = Number(raw);
    if (n < min || n > max) problems.push(`--${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
  // Settings not given as flags come from the one configuration loader.
  let config: Config;
  try {
    config = loadConfigWith({ ...(values.topic ? { KAFKA_TOPIC: values.topic } : {}), ...(values.brokers ? { KAFKA_BROKERS: values.brokers } : {}) });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.problems.join('\n'));
    throw err;
  }
  const count = num('count', PRODUCE_DEFAULT_COUNT, 1);
  const offset = num('offset', 0, 0);
  const flags: Flags = {
    count,
    rate: num('rate', 0, 0, PRODUCE_MAX_RATE),
    seed: num('seed', PRODUCE_DEFAULT_SEED, 0, 2 ** 31 - 1),
    offset,
    total: num('total', offset + count, 1),
    live: values.live === true,
    topic: config.kafka.topic,
    brokers: config.kafka.brokers ?? ['127.0.0.1:9092'],
    slice: num('slice', PRODUCE_DEFAULT_SLICE, PRODUCE_MIN_SLICE, PRODUCE_MAX_SLICE),
    quiet: values.quiet === true,
    partitions: config.kafka.partitions,
  };
  if (flags.offset + flags.count > flags.total) problems.push('--offset + --count must not exceed --total');
  if (flags.live && flags.rate === 0) problems.push('--live needs --rate (block times follow the rate)');
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return flags;
}

function progressLine(sent: number, total: number, elapsedMs: number): string {
  const pct = Math.floor((sent / total) * 100);
  const rate = elapsedMs > 0 ? Math.round(sent / (elapsedMs / 1000)) : 0;
  return `produce [${'#'.repeat(Math.floor((pct * PROGRESS_BAR_CHARS) / 100)).padEnd(PROGRESS_BAR_CHARS, '.')}] ${pct}% ${sent.toLocaleString('en-US')}/${total.toLocaleString('en-US')} records, ${rate.toLocaleString('en-US')} records/s`;
}

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`produce: ${err.message.replace(/\n/g, '\nproduce: ')}\n\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
  // kafkajs retry chatter would drown the progress display; failures still surface as errors.
  const log = createLogger('error');
  // A CLI should say soon that the broker is unreachable, not ride out a long outage.
  const kafka = kafkaClient({ brokers: flags.brokers, clientId: 'tx-analytics-produce', retries: 5 }, log);
  await ensureTopics(kafka, [flags.topic], flags.partitions);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();

  const tmp = mkdtempSync(path.join(tmpdir(), 'txa-produce-'));
  const wh = new EmbeddedWarehouse(tmp);
  // --live: the data set's time window starts now and lasts as long as producing it will,
  // so each record's block_time is about its produce time.
  const nowSec = Math.floor(Date.now() / 1000);
  const window = flags.live ? { startTime: nowSec, endTime: nowSec + Math.max(1, Math.ceil(flags.total / flags.rate)) } : demoWindow();
  const generate = async (offset: number): Promise<string[]> => {
    const count = Math.min(flags.slice, flags.offset + flags.count - offset);
    const text = await demoRecordsNdjson(wh, { seed: flags.seed, total: flags.total, offset, count, ...window });
    return text.split('\n').filter((l) => l.length > 0);
  };

  const pacer = new Pacer(flags.rate);
  const chunk =
    flags.rate > 0 ? Math.min(KAFKA_PUBLISH_CHUNK, Math.max(PRODUCE_MIN_CHUNK, Math.floor(flags.rate / PRODUCE_CHUNKS_PER_SECOND))) : KAFKA_PUBLISH_CHUNK;
  const tty = process.stderr.isTTY && !flags.quiet;
  let t0 = performance.now();
  let sent = 0;
  let lastPrint = 0;
  const print = (force = false): void => {
    if (flags.quiet) return;
    const now = performance.now();
    if (!force && now - lastPrint < (tty ? PRODUCE_PROGRESS_TTY_MS : PRODUCE_PROGRESS_LOG_MS)) return;
    lastPrint = now;
    const line = progressLine(sent, flags.count, now - t0);
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
  try {
    const end = flags.offset + flags.count;
    let next = generate(flags.offset);
    await next;
    t0 = performance.now(); // the rate shown is the publishing rate, not engine start-up
    for (let offset = flags.offset; offset < end; offset += flags.slice) {
      const lines = await next;
      const following = offset + flags.slice;
      if (following < end) next = generate(following);
      await publishLines(producer, flags.topic, lines, {
        pacer,
        chunk,
        onSent: (n) => {
          sent += n;
          print();
        },
      });
    }
    print(true);
    if (tty) process.stderr.write('\n');
    const seconds = (performance.now() - t0) / 1000;
    process.stdout.write(`published ${sent} records to ${flags.topic} in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)} records/s)\n`);
  } finally {
    await producer.disconnect();
    await wh.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  const message = (err as Error).message;
  const hint = /connect|ECONNREFUSED|broker/i.test(message) ? ' (is the broker running? scripts/kafka.sh start)' : '';
  process.stderr.write(`produce: ${message}${hint}\n`);
  process.exit(1);
});
