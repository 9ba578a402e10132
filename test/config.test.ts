import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../core/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080, host: '127.0.0.1', demoRows: 2_000_000, logLevel: 'info', redisUrl: undefined,
      clickhouse: { url: undefined }, kafka: { brokers: undefined, topic: 'solana.instructions', groupId: 'tx-analytics-ingest' },
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

  it('parses the server transport and Kafka settings', () => {
    const c = loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_USER: 'u', CLICKHOUSE_PASSWORD: 'p', KAFKA_BROKERS: 'k1:9092, k2:9092' });
    expect(c.clickhouse).toEqual({ url: 'http://ch:8123', user: 'u', password: 'p', database: 'default' });
    expect(c.kafka.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(c.kafka.concurrentPartitions).toBe(4);
    expect(loadConfig({ KAFKA_CONCURRENT_PARTITIONS: '1' }).kafka.concurrentPartitions).toBe(1);
    expect(() => loadConfig({ KAFKA_CONCURRENT_PARTITIONS: '0' })).toThrow(/KAFKA_CONCURRENT_PARTITIONS must be between 1 and 64, got 0/);
  });
});
