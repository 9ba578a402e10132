import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConfigError, ENV_SCHEMA, loadConfig } from '../../core/config/load-config.ts';

describe('configuration', () => {
  it('declares every variable once, in one schema, each with its default or the way its default is found', () => {
    for (const [name, schema] of Object.entries(ENV_SCHEMA.properties) as [string, { default?: unknown; description?: string }][]) {
      expect(schema.description, name).toBeTruthy();
      if (schema.default === undefined)
        expect(schema.description, `${name}: no default, so the description says what unset means`).toMatch(/\b(?:default|unset)\b/);
    }
    // A variable the schema declares is read: an unknown value of each is refused or kept, never ignored.
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '1' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS must be between 6000 and 300000, got 1/);
    expect(() => loadConfig({ DASHBOARD_SIGNUP: 'maybe' })).toThrow(/DASHBOARD_SIGNUP must be open or invite, got "maybe"/);
    expect(() => loadConfig({ SQL_TIMEOUT_SECONDS: '10', EXPORT_STATEMENT_TIMEOUT_SECONDS: '20' })).toThrow(
      /EXPORT_STATEMENT_TIMEOUT_SECONDS must be between 1 and 10, got 20/,
    );
    expect(loadConfig({ SQL_TIMEOUT_SECONDS: '10' }).exports.statementTimeoutSeconds).toBe(10);
  });

  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      demoRows: 2_000_000,
      logLevel: 'info',
      redisUrl: undefined,
      clickhouse: { url: undefined },
      kafka: { brokers: undefined, topic: 'solana.instructions', groupId: 'tx-analytics-ingest' },
      adminTokenGenerated: true,
    });
    expect(c.adminToken.length).toBeGreaterThanOrEqual(24);
  });

  it('reports every problem at once', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', DEMO_ROWS: '-1', CLICKHOUSE_URL: 'ftp://x', KAFKA_BROKERS: 'localhost', LOG_LEVEL: 'loud', ADMIN_TOKEN: 'short' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'PORT must be an integer, got "eighty"',
      'CLICKHOUSE_URL must use http: or https:, got "ftp:"',
      'DEMO_ROWS must be between 0 and 10000000000, got -1',
      'KAFKA_BROKERS entry "localhost" must be host:port',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'ADMIN_TOKEN must be at least 16 characters',
    ]);
  });

  it('reads LOG_FORMAT: auto by default (pretty on a terminal), json or pretty; anything else named', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'colour' })).toThrow(/LOG_FORMAT must be one of auto, json, pretty, got "colour"/);
  });

  it('reads CORS_ORIGINS: any origin by default, none, or a list of exact origins (each problem named)', () => {
    expect(loadConfig({}).http.corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'none' }).http.corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173/' }).http.corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path,ftp://x.org,app.example.com' })).toThrow(
      /CORS_ORIGINS must be \*, none, or a comma-separated list of origins[^\n]*"https:\/\/app\.example\.com\/path"\n[^\n]*"ftp:\/\/x\.org"\n[^\n]*"app\.example\.com"/,
    );
  });

  it('times out requests by default, and keeps the idle-connection time-out above the longest silent answer', () => {
    expect(loadConfig({}).http).toEqual({ requestTimeoutMs: 30_000, connectionTimeoutMs: 120_000, corsOrigins: '*' });
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }).http.requestTimeoutMs).toBe(1000);
    expect(loadConfig({ SQL_TIMEOUT_SECONDS: '300' }).http.connectionTimeoutMs).toBe(600_000);
    expect(loadConfig({ CONNECTION_TIMEOUT_MS: '0' }).http.connectionTimeoutMs).toBe(0);
    // 0 would mean no request time-out at all: a trickled body holds its connection forever.
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' })).toThrow(/REQUEST_TIMEOUT_MS must be between 100 and 3600000, got 0/);
    expect(() => loadConfig({ CONNECTION_TIMEOUT_MS: '30000' })).toThrow(
      /CONNECTION_TIMEOUT_MS must be 0 or more than SQL_TIMEOUT_SECONDS and ANALYTICS_TIMEOUT_SECONDS \(30000 ms\) and REQUEST_TIMEOUT_MS \(30000 ms\), got 30000/,
    );
  });

  it('ends a stuck process after 30 s by default; the watchdog can be turned off, not set below a second', () => {
    expect(loadConfig({}).stallExitMs).toBe(30_000);
    expect(loadConfig({ PROCESS_STALL_EXIT_MS: '0' }).stallExitMs).toBe(0);
    expect(loadConfig({ PROCESS_STALL_EXIT_MS: '2000' }).stallExitMs).toBe(2000);
    expect(() => loadConfig({ PROCESS_STALL_EXIT_MS: '500' })).toThrow(/PROCESS_STALL_EXIT_MS must be 0 \(no watchdog\) or at least 1000, got 500/);
  });

  it('parses the server transport and Kafka settings', () => {
    const c = loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_USER: 'u', CLICKHOUSE_PASSWORD: 'p', KAFKA_BROKERS: 'k1:9092, k2:9092' });
    expect(c.clickhouse).toEqual({ url: 'http://ch:8123', user: 'u', password: 'p', database: 'default' });
    expect(c.kafka.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(c.kafka.concurrentPartitions).toBe(4);
    expect(loadConfig({ KAFKA_CONCURRENT_PARTITIONS: '1' }).kafka.concurrentPartitions).toBe(1);
    expect(() => loadConfig({ KAFKA_CONCURRENT_PARTITIONS: '0' })).toThrow(/KAFKA_CONCURRENT_PARTITIONS must be between 1 and 64, got 0/);
    // A backfill topic beside the live one: off unless named, never the live or dead-letter topic.
    expect(c.kafka.backfillTopic).toBeUndefined();
    expect(loadConfig({ KAFKA_BACKFILL_TOPIC: 'history' }).kafka.backfillTopic).toBe('history');
    expect(() => loadConfig({ KAFKA_BACKFILL_TOPIC: 'solana.instructions' })).toThrow(/KAFKA_BACKFILL_TOPIC must differ/);
    expect(() => loadConfig({ KAFKA_BACKFILL_TOPIC: 'bad topic!' })).toThrow(/KAFKA_BACKFILL_TOPIC must be 1-249 characters/);
  });

  it('turns on cluster mode with CLICKHOUSE_CLUSTER, only with a server and a plain cluster name', () => {
    const c = loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'txa' });
    expect(c.clickhouse.cluster).toBe('txa');
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123' }).clickhouse.cluster).toBeUndefined();
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'txa' })).toThrow(/CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "txa' --" })).toThrow(/CLICKHOUSE_CLUSTER must be a cluster name/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'txa', CLICKHOUSE_DATABASE: 'a-b' })).toThrow(
      /CLICKHOUSE_DATABASE must be letters/,
    );
  });

  it('reads the metrics token from METRICS_TOKEN_FILE (a container secret), and names a bad one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-config-'));
    const file = path.join(dir, 'token');
    writeFileSync(file, 'a-metrics-token-from-a-file\n');
    expect(loadConfig({ METRICS_TOKEN_FILE: file }).access.metricsToken).toBe('a-metrics-token-from-a-file');
    expect(() => loadConfig({ METRICS_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(/METRICS_TOKEN_FILE cannot be read/);
    expect(() => loadConfig({ METRICS_TOKEN_FILE: file, METRICS_TOKEN: 'another-token-0123456789' })).toThrow(/not both/);
    writeFileSync(file, 'short\n');
    expect(() => loadConfig({ METRICS_TOKEN_FILE: file })).toThrow(/at least 16 characters/);
  });

  it('ships a compose stack whose API and Prometheus read the same metrics-token secret', () => {
    const root = path.resolve(import.meta.dirname, '..', '..');
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const prometheus = readFileSync(path.join(root, 'deploy/prometheus/prometheus.yml'), 'utf8');
    const secretPath = /credentials_file: (\S+)/.exec(prometheus)?.[1];
    expect(secretPath).toBe('/run/secrets/metrics_token');
    expect(compose).toContain(`METRICS_TOKEN_FILE: ${secretPath}`);
    expect(compose.match(/secrets: \[metrics_token\]/g)).toHaveLength(2);
    const file = /metrics_token:\n\s+file: (\S+)/.exec(compose)?.[1];
    expect(loadConfig({ METRICS_TOKEN_FILE: path.join(root, file!) }).access.metricsToken?.length).toBeGreaterThanOrEqual(16);
  });
});

describe('compose stacks start one migration runner at a time', () => {
  // Every `npm start` / `npm run ingest` process applies the migrations at start, and two
  // applying one at once do it twice: two copies of 090 each copy tx_by_signature_v2's
  // records into tx_by_signature_v3, and every record is stored there twice. So one such
  // service starts first and every other waits for it to be healthy (it is after migrating).
  const root = path.resolve(import.meta.dirname, '..', '..');
  interface Service {
    command?: string[];
    depends_on?: string[] | Record<string, { condition?: string }>;
    healthcheck?: unknown;
  }
  it.each(['docker-compose.yml', 'deploy/cluster/docker-compose.yml'])('%s', (file) => {
    const { services } = parseYaml(readFileSync(path.join(root, file), 'utf8'), { merge: true }) as { services: Record<string, Service> };
    const migrating = Object.keys(services).filter((n) => ['npm start', 'npm run ingest'].includes(services[n]!.command?.join(' ') ?? ''));
    expect(migrating.length).toBeGreaterThanOrEqual(2);
    const waitsFor = (n: string): string[] => {
      const d = services[n]!.depends_on;
      return d === undefined || Array.isArray(d) ? [] : Object.keys(d).filter((k) => d[k]?.condition === 'service_healthy');
    };
    const first = migrating.filter((n) => !waitsFor(n).some((d) => migrating.includes(d)));
    expect(first).toHaveLength(1);
    // Healthy only after migrating, and a long migration (090 copies the point table) is not counted as failing.
    expect((services[first[0]!]!.healthcheck as { start_period?: string } | undefined)?.start_period).toMatch(/^\d+[hm]$/);
    for (const n of migrating.filter((x) => x !== first[0])) expect(waitsFor(n), n).toContain(first[0]);
  });
});
