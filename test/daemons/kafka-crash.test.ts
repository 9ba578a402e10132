// Exactly-once effect across crashes: the ingest process (npm run ingest) is killed with
// SIGKILL at random points while it consumes, restarted each time, and finally allowed to
// drain. Records re-delivered after each crash (stored but not yet committed) must not
// create duplicates: the base table holds exactly N rows and every view agrees with it.
// Beside the live topic, the same records arrive again through a backfill topic
// (KAFKA_BACKFILL_TOPIC, the pipeline's backfill lane; issue 40), killed with it: every one of
// them is a duplicate, judged against ingest_keys, the only de-duplication state.
// chDB binds a data directory to one process, so this test process opens the ingest
// process's DATA_DIR only after that process has exited.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServices, type Services } from '../../api/server/services.ts';
import { loadConfig } from '../../core/config/load-config.ts';
import { createLogger } from '../../core/logger.ts';
import { kafkaClient } from '../../ingest/kafka-client.ts';
import { tableCounts } from '../support/fixtures.ts';
import { freePort, startBroker, waitFor, type TestBroker } from '../../scripts/daemons/kafka-broker.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const N = 20_000;
const TOPIC = 'crash-test';
const GROUP = 'crash-test-ingest';
const KILLS = 4;
const BACKFILL_TOPIC = 'crash-test-backfill';

let broker: TestBroker;
let dataDir: string;
let services: Services | undefined;
const children = new Set<ChildProcess>();

/** Run a TypeScript entry point as ONE node process (the tsx CLI would add a parent process). */
function node(script: string, env: Record<string, string>, args: string[] = []): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return Object.assign(child, { output: () => out });
}

const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)));

async function committed(groupId = GROUP, topic = TOPIC): Promise<number> {
  // Right after the broker starts, the group coordinator may still be loading
  // (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS): ask again.
  for (let attempt = 0; ; attempt += 1) {
    const admin = kafkaClient({ brokers: [broker.brokers], clientId: 'crash-test-admin' }, createLogger('silent')).admin();
    try {
      await admin.connect();
      const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return (t?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await admin.disconnect();
    }
  }
}

// The first start fetches the broker jars (about a minute), hence the long hook timeout.
beforeAll(async () => {
  broker = await startBroker();
  dataDir = mkdtempSync(path.join(tmpdir(), 'txa-crash-'));
}, 240_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await services?.close();
  await broker?.cleanup();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it('SIGKILLed and restarted ingest stores every record exactly once', async () => {
  // The same records (same seed) on the live topic and on the topic the backfill lane replays.
  const produce = (topic: string) =>
    node('ingest/produce-cli.ts', { KAFKA_BROKERS: broker.brokers }, ['--topic', topic, '--count', String(N), '--seed', '5', '--slice', '10000', '--quiet']);
  const producer = produce(TOPIC);
  expect(await exited(producer), producer.output()).toBe(0);
  const produced = producer.output();
  expect(produced).toContain(`published ${N} records`);
  const again = produce(BACKFILL_TOPIC);
  expect(await exited(again), again.output()).toBe(0);

  const env = {
    DATA_DIR: dataDir,
    KAFKA_BROKERS: broker.brokers,
    KAFKA_TOPIC: TOPIC,
    KAFKA_GROUP_ID: GROUP,
    LOG_LEVEL: 'info',
    // Small fetches make many small batches, so the kills land between insert and commit.
    KAFKA_MAX_BYTES_PER_PARTITION: '65536',
    // A killed member holds its partitions until its session expires; keep that short.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    INGEST_METRICS_PORT: '0',
    KAFKA_BACKFILL_TOPIC: BACKFILL_TOPIC,
    // Every batch through the checks in the engine (issue 40), however small.
    INGEST_CHECKS: 'engine',
    INGEST_ENGINE_MIN_RECORDS: '1',
  };
  const progress: number[] = [];
  for (let k = 0; k < KILLS; k += 1) {
    const ingest = node('ingest/ingest-main.ts', env);
    // Kill at a random moment after this run has committed something: inserts, commits
    // and re-deliveries are then all in play.
    const start = await committed();
    await waitFor('the ingest process to make progress', async () => ingest.exitCode !== null || (await committed()) > start || start === N, 60_000, 100).catch(
      (err: Error) => {
        throw new Error(`${err.message}; its output:\n${ingest.output().slice(-4000)}`);
      },
    );
    expect(ingest.exitCode, ingest.output()).toBeNull();
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 600)));
    ingest.kill('SIGKILL');
    await exited(ingest);
    progress.push(await committed());
    console.log(`kill ${k + 1}: committed ${progress.at(-1)} at ${new Date().toISOString()}`);
  }
  // At least one kill landed in mid-stream (after some commits, before the last one).
  expect(
    progress.some((c) => c > 0 && c < N),
    `committed offsets after each kill: ${progress.join(', ')}`,
  ).toBe(true);

  console.log(`drain from ${new Date().toISOString()}`);
  const metricsPort = await freePort();
  const final = node('ingest/ingest-main.ts', { ...env, INGEST_METRICS_PORT: String(metricsPort) });
  await waitFor('the ingest process to drain the topic', async () => (await committed()) === N, 120_000, 500);
  await waitFor('the backfill to drain its topic', async () => (await committed(`${GROUP}-backfill`, BACKFILL_TOPIC)) === N, 120_000, 500);
  // The standalone process serves its measurements for Prometheus.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(metrics).toMatch(/txa_ingest_kafka_records_total\{topic="crash-test",outcome="accepted"\} \d+/);
  expect(metrics).toContain('txa_ingest_kafka_consumer_lag{topic="crash-test",partition=');
  final.kill('SIGTERM');
  expect(await exited(final), final.output().slice(-2000)).toBe(0);

  console.log(`drained at ${new Date().toISOString()}`);
  services = await createServices(loadConfig({ DATA_DIR: dataDir, DEMO_ROWS: '0', LOG_LEVEL: 'silent' }), createLogger('silent'));
  const counts = await tableCounts(services);
  expect(counts.transactions).toBe(N);
  expect(counts.tx_rid_by_sig).toBe(N);
  const [keys] = await services.wh.query<{ n: string }>('SELECT count() AS n FROM ingest_keys');
  expect(Number(keys?.n)).toBe(N);
  expect(counts.protocol_hourly).toBe(N);
  expect(counts.instruction_hourly).toBe(N);
  const [distinct] = await services.wh.query<{ n: string }>('SELECT uniqExact(signature, instruction_index) AS n FROM transactions');
  expect(Number(distinct?.n)).toBe(N);
  const [addr] = await services.wh.query<{ n: string }>('SELECT sum(length(arrayDistinct(arrayPushBack(accounts, program_id)))) AS n FROM transactions');
  expect(counts.tx_by_address_v2).toBe(Number(addr?.n));
}, 300_000);
