// The monitoring stack as shipped: every metric a Grafana panel queries is exported by the
// process that panel watches (the API with Kafka consuming in-process, and the standalone
// ingest process), and a real Prometheus started from deploy/prometheus/prometheus.yml
// (only its targets and secret path pointed at this test's ports and files) scrapes both,
// the API through its bearer token, with up == 1.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessKafka } from '../../api/server/services.ts';
import { createLogger } from '../../core/logger.ts';
import { ensureTopics, kafkaClient } from '../../ingest/kafka-client.ts';
import { publishLines } from '../../ingest/kafka-producer.ts';
import type { KafkaSource } from '../../ingest/kafka-source.ts';
import { demoRecords } from '../support/fixtures.ts';
import { freePort, startBroker, type TestBroker } from '../../scripts/daemons/kafka-broker.ts';
import { startPrometheusWithConfig, type PrometheusServer } from '../../scripts/daemons/prometheus-server.ts';
import { startApp } from '../support/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TOPIC = 'monitoring-test';
const log = createLogger('silent');
const dir = mkdtempSync(path.join(tmpdir(), 'txa-monitoring-'));
// The metrics token as the compose stack hands it over: a file both sides read.
const tokenFile = path.join(dir, 'metrics_token');
writeFileSync(tokenFile, 'monitoring-test-metrics-token\n');

/** Metric families the shipped Grafana board queries, with the jobs its queries name. */
function dashboardMetrics(): { name: string; httpOnly: boolean }[] {
  const board = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/dashboards/tx-analytics.json'), 'utf8')) as unknown;
  const exprs: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'expr' && typeof x === 'string') exprs.push(x);
        else visit(x);
      }
    }
  };
  visit(board);
  const names = new Set<string>();
  for (const e of exprs) for (const m of e.matchAll(/\b((?:txa|process|nodejs)_[a-z0-9_]+)/g)) names.add(m[1]!.replace(/_(bucket|count|sum)$/, ''));
  return [...names].sort().map((name) => ({ name, httpOnly: name.startsWith('txa_http_') }));
}

const families = (exposition: string): Set<string> => new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let broker: TestBroker;
let t: Awaited<ReturnType<typeof startApp>>;
let source: KafkaSource;
let producer: Producer;
let apiAddress: string;
let ingest: ChildProcess & { output: () => string };
let ingestPort: number;
let prom: PrometheusServer | undefined;

beforeAll(async () => {
  broker = await startBroker();
  t = await startApp({ KAFKA_BROKERS: broker.brokers, KAFKA_TOPIC: TOPIC, KAFKA_GROUP_ID: 'monitoring-api', METRICS_TOKEN_FILE: tokenFile });
  const kafka = kafkaClient({ brokers: [broker.brokers], clientId: 'monitoring-producer' }, log);
  await ensureTopics(kafka, [TOPIC, `${TOPIC}.dlq`], 2);
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  // The API's own wiring of the in-process source (api/server/main.ts uses the same function).
  source = inProcessKafka(t.services)!;
  await source.start();
  const records = await demoRecords(t.services, 500, 5);
  await publishLines(producer, TOPIC, [...records.map((r) => JSON.stringify(r)), '{"not": "a record"}']);
  await waitFor('the API process to store the records', () => source.stats().stored + source.stats().duplicates >= 500);
  apiAddress = await t.app.listen({ port: 0, host: '127.0.0.1' });

  // The standalone ingest process, on a data directory of its own, in its own group.
  ingestPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'ingest/ingest-main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: path.join(dir, 'ingest-data'),
      DEMO_ROWS: '0',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      KAFKA_BROKERS: broker.brokers,
      KAFKA_TOPIC: TOPIC,
      KAFKA_GROUP_ID: 'monitoring-ingest',
      INGEST_METRICS_PORT: String(ingestPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  ingest = Object.assign(child, { output: () => out });
  await waitFor(
    'the ingest process to consume the topic',
    async () => {
      if (ingest.exitCode !== null) throw new Error(`ingest exited: ${out}`);
      const text = await fetch(`http://127.0.0.1:${ingestPort}/metrics`).then(
        (r) => r.text(),
        () => '',
      );
      return /txa_ingest_kafka_records_total\{topic="monitoring-test",outcome="accepted"\} 500/.test(text);
    },
    120_000,
  );
}, 300_000);

afterAll(async () => {
  await prom?.stop();
  ingest?.kill('SIGTERM');
  await source?.stop();
  await producer?.disconnect();
  await t?.cleanup();
  await broker?.cleanup();
});

describe('monitoring as shipped', () => {
  it('exports every metric the Grafana board queries: all of them on the API, all but HTTP on the ingest process', async () => {
    const wanted = dashboardMetrics();
    expect(wanted.length).toBeGreaterThan(10);
    const api = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer monitoring-test-metrics-token' } });
    expect(api.statusCode).toBe(200);
    const apiFamilies = families(api.body);
    expect(wanted.filter((m) => !apiFamilies.has(m.name)).map((m) => m.name)).toEqual([]);
    // Kafka consumed in-process reports on the API's registry, with samples.
    expect(api.body).toMatch(/txa_ingest_kafka_records_total\{topic="monitoring-test",outcome="accepted"\} 500/);
    expect(api.body).toMatch(/txa_ingest_kafka_dead_letters_total\{topic="monitoring-test",kind="schema"\} 1/);
    expect(api.body).toMatch(/txa_ingest_records_total\{source="kafka:monitoring-test",outcome="accepted"\} 500/);

    const standalone = await (await fetch(`http://127.0.0.1:${ingestPort}/metrics`)).text();
    const ingestFamilies = families(standalone);
    expect(wanted.filter((m) => !m.httpOnly && !ingestFamilies.has(m.name)).map((m) => m.name)).toEqual([]);
    // Its pipeline and warehouse report too, not only the Kafka source.
    expect(standalone).toMatch(/txa_ingest_records_total\{source="kafka:monitoring-test",outcome="accepted"\} 500/);
    expect(standalone).toMatch(/txa_warehouse_query_duration_seconds_count\{operation="insert",outcome="ok"\} \d+/);
  });

  it('a real Prometheus from deploy/prometheus/prometheus.yml scrapes the API (with its token) and the ingest process: up == 1', async () => {
    const api = new URL(apiAddress);
    const shipped = readFileSync(path.join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8');
    // Only addresses and the secret's path change; jobs, paths and authorization stay as shipped.
    const config = shipped
      .replace('"api:8080"', JSON.stringify(`127.0.0.1:${api.port}`))
      .replace('"ingest:9464"', JSON.stringify(`127.0.0.1:${ingestPort}`))
      .replace('/run/secrets/metrics_token', tokenFile)
      .replace('scrape_interval: 5s', 'scrape_interval: 1s');
    expect(config).not.toBe(shipped);
    prom = await startPrometheusWithConfig(config);
    await waitFor(
      'both targets up',
      async () => {
        const up = await prom!.query('up');
        return ['api', 'ingest'].every((job) => up.some((s) => s.metric.job === job && s.value[1] === '1'));
      },
      60_000,
    );
    const served = await prom.query('sum(txa_ingest_kafka_records_total{outcome="accepted"}) by (job)');
    expect(served.map((s) => s.metric.job).sort()).toEqual(['api', 'ingest']);
  }, 90_000);
});
