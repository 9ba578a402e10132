// deploy/cluster/ (2 shards x 2 replicas, three Keeper nodes, Kafka, two ingest and two API
// replicas, Redis, a load balancer, Prometheus, Grafana), checked WITHOUT RUNNING IT: docker
// cannot run on these machines and no ClickHouse server or Keeper can be installed. What is
// checked: the files parse (YAML, XML, the engine's SQL parser), and hosts, ports, macros,
// Keeper ids, environment names and scrape targets agree with each other and with
// core/config/load-config.ts. Whether the stack starts and replicates is the runbook's check
// (docs/cluster.md, "Verify a cluster after deploy").
import { ENV_SCHEMA } from '../../core/config/env-schema.ts';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../core/config/load-config.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { PUBLISHED_TABLES } from '../../warehouse/tables.ts';
import { localName } from '../../warehouse/cluster-layout.ts';
import { parseXml, select, textAt, type XmlElement } from '../support/mini-xml.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const dir = path.join(root, 'deploy/cluster');
const read = (p: string): string => readFileSync(path.join(dir, p), 'utf8');

interface Service {
  image?: string;
  build?: string;
  hostname?: string;
  environment?: Record<string, string | number>;
  volumes?: string[];
  ports?: string[];
  depends_on?: string[] | Record<string, unknown>;
}
const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets: Record<string, { file: string }>;
};
const services = compose.services;
const named = (re: RegExp): string[] =>
  Object.keys(services)
    .filter((n) => re.test(n))
    .sort();
const chNodes = named(/^ch-s\d+-r\d+$/);
const keepers = named(/^keeper-\d+$/);
const apis = named(/^api-\d+$/);
const ingests = named(/^ingest-\d+$/);
const cluster = parseXml(read('clickhouse/cluster.xml'));

/** A service's environment as the process sees it: compose's ${VAR:-default} expanded to the default. */
function envOf(name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
}

describe('deploy/cluster (files parsed and cross-checked; the stack itself not run here)', () => {
  it('has every service the issue names', () => {
    expect(chNodes).toEqual(['ch-s1-r1', 'ch-s1-r2', 'ch-s2-r1', 'ch-s2-r2']);
    expect(keepers).toEqual(['keeper-1', 'keeper-2', 'keeper-3']);
    expect(apis).toEqual(['api-1', 'api-2']);
    expect(ingests).toEqual(['ingest-1', 'ingest-2']);
    for (const s of ['kafka', 'redis', 'lb', 'prometheus', 'grafana']) expect(Object.keys(services)).toContain(s);
    for (const n of [...chNodes, ...keepers]) expect(services[n]!.hostname, n).toBe(n);
  });

  it('mounts only files that exist, and declares every named volume', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const [src] = v.split(':');
        if (src!.startsWith('.')) expect(existsSync(path.resolve(dir, src!)), `${name}: ${src}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${name}: ${src}`).toContain(src);
      }
    }
    expect(existsSync(path.resolve(dir, compose.secrets.metrics_token!.file))).toBe(true);
  });

  it('parses every XML config (well-formed)', () => {
    const files = [
      'clickhouse/cluster.xml',
      ...readdirSync(path.join(dir, 'clickhouse/macros')).map((f) => `clickhouse/macros/${f}`),
      ...readdirSync(path.join(dir, 'keeper')).map((f) => `keeper/${f}`),
    ];
    expect(files).toHaveLength(1 + 4 + 3);
    for (const f of files) expect(parseXml(read(f)).name, f).toBe('clickhouse');
    // The checker itself refuses what is not well-formed.
    expect(() => parseXml('<clickhouse><a></b></clickhouse>')).toThrow(/closes <a>/);
    expect(() => parseXml('<clickhouse><a>')).toThrow(/never closed/);
    expect(() => parseXml('<clickhouse a=1></clickhouse>')).toThrow(/not well-formed/);
    expect(() => parseXml('<clickhouse>x & y</clickhouse>')).toThrow(/bare "&"/);
    expect(() => parseXml('<a></a><b></b>')).toThrow(/second root/);
  });

  it('names in remote_servers exactly the ClickHouse services, as the cluster the services are told to use', () => {
    const [txa, ...others] = select(cluster, 'remote_servers').flatMap((r) => r.children);
    expect(others).toEqual([]);
    for (const s of [...apis, ...ingests]) expect(envOf(s).CLICKHOUSE_CLUSTER, s).toBe(txa!.name);
    expect(txa!.children.find((c) => c.name === 'secret')?.attrs.from_env).toBe('CLICKHOUSE_INTERSERVER_SECRET');
    const shards = select(txa!, 'shard');
    expect(shards).toHaveLength(2);
    const hosts = shards.flatMap((s) => select(s, 'replica').map((r) => textAt(r, 'host')));
    expect(hosts.sort()).toEqual(chNodes);
    for (const s of shards) {
      expect(textAt(s, 'internal_replication')).toBe('true');
      for (const r of select(s, 'replica')) expect(textAt(r, 'port')).toBe('9000');
    }
    for (const n of chNodes) expect(String(services[n]!.environment?.CLICKHOUSE_INTERSERVER_SECRET ?? '')).not.toBe('');
  });

  it('gives each node its own macros: replica unique, shard the one remote_servers puts it in, file mounted on that node', () => {
    const shards = select(cluster, 'remote_servers', 'txa', 'shard');
    const shardOf = new Map<string, string>();
    shards.forEach((s, i) => {
      for (const r of select(s, 'replica')) shardOf.set(textAt(r, 'host'), String(i + 1).padStart(2, '0'));
    });
    const seen = new Set<string>();
    for (const node of chNodes) {
      const mount = services[node]!.volumes!.find((v) => v.endsWith(':/etc/clickhouse-server/config.d/macros.xml:ro'));
      expect(mount, node).toBe(`./clickhouse/macros/${node}.xml:/etc/clickhouse-server/config.d/macros.xml:ro`);
      const macros = parseXml(read(`clickhouse/macros/${node}.xml`));
      expect(textAt(macros, 'macros', 'shard'), node).toBe(shardOf.get(node));
      expect(textAt(macros, 'macros', 'cluster')).toBe('txa');
      const replica = textAt(macros, 'macros', 'replica');
      expect(seen.has(replica), replica).toBe(false);
      seen.add(replica);
      // Replication fetches parts from the host a replica advertises.
      expect(textAt(macros, 'interserver_http_host')).toBe(node);
      expect(services[node]!.volumes).toContain('./clickhouse/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro');
    }
    expect(seen.size).toBe(4);
  });

  it("agrees on the three Keeper nodes: the servers' <zookeeper>, each Keeper's id and Raft peers", () => {
    const zk = select(cluster, 'zookeeper', 'node').map((n) => `${textAt(n, 'host')}:${textAt(n, 'port')}`);
    expect(zk).toEqual(keepers.map((k) => `${k}:9181`));
    const ids = new Set<string>();
    for (const k of keepers) {
      const n = k.split('-')[1]!;
      expect(services[k]!.volumes).toContain(`./keeper/${k}.xml:/etc/clickhouse-keeper/keeper_config.xml:ro`);
      const conf = parseXml(read(`keeper/${k}.xml`));
      expect(textAt(conf, 'keeper_server', 'server_id')).toBe(n);
      expect(textAt(conf, 'keeper_server', 'tcp_port')).toBe('9181');
      ids.add(textAt(conf, 'keeper_server', 'server_id'));
      const peers = select(conf, 'keeper_server', 'raft_configuration', 'server').map((s: XmlElement) => `${textAt(s, 'id')}@${textAt(s, 'hostname')}`);
      expect(peers).toEqual(keepers.map((x) => `${x.split('-')[1]}@${x}`));
    }
    expect(ids.size).toBe(3);
    expect(textAt(cluster, 'user_directories', 'replicated', 'zookeeper_path')).toMatch(/^\/clickhouse\//);
  });

  it('configures API and ingest replicas with variables core/config/load-config.ts reads, and values it accepts', () => {
    // Every variable the loader reads is declared once, in the env schema (core/config/env-schema.ts).
    const known = new Set(Object.keys(ENV_SCHEMA.properties));
    expect(known).toContain('CLICKHOUSE_CLUSTER');
    const writers = new Set<string>();
    for (const s of [...apis, ...ingests]) {
      const env = envOf(s);
      for (const k of Object.keys(env)) expect(known, `${s}: ${k} is not a variable core/config/load-config.ts reads`).toContain(k);
      const c = loadConfig({
        ...env,
        METRICS_TOKEN_FILE: env.METRICS_TOKEN_FILE === undefined ? undefined : path.resolve(dir, compose.secrets.metrics_token!.file),
      });
      expect(c.clickhouse.cluster).toBe('txa');
      expect(chNodes).toContain(new URL(c.clickhouse.url!).hostname);
      expect(new URL(c.clickhouse.url!).port).toBe('8123');
      expect(new URL(c.redisUrl!).hostname).toBe('redis');
      writers.add(c.ingest.writerId);
      if (s.startsWith('ingest')) {
        expect(c.kafka.brokers).toEqual(['kafka:9092']);
        expect(c.kafka.groupId).toBe('tx-analytics-ingest');
        expect(c.kafka.partitions).toBeGreaterThanOrEqual(ingests.length);
      } else {
        // An API replica does not join the consumer group.
        expect(c.kafka.brokers).toBeUndefined();
        expect(c.port).toBe(8080);
        expect(c.access.metricsToken?.length).toBeGreaterThanOrEqual(16);
      }
    }
    // Each process repairs only the inserts it began: writer ids must differ.
    expect(writers.size).toBe(apis.length + ingests.length);
    // Page tokens are signed with the operator token: one value for every API replica.
    expect(new Set(apis.map((a) => envOf(a).ADMIN_TOKEN)).size).toBe(1);
    // Each process talks to a different node, so one node's loss stops one process, not all.
    expect(new Set([...apis, ...ingests].map((s) => envOf(s).CLICKHOUSE_URL)).size).toBe(4);
  });

  it('scrapes each API and ingest replica and each ClickHouse node in Prometheus, and balances both API replicas', () => {
    const prom = parseYaml(read('prometheus.yml')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[]; authorization?: { credentials_file: string } }[];
    };
    const targets = (job: string): string[] =>
      prom.scrape_configs
        .find((j) => j.job_name === job)!
        .static_configs.flatMap((c) => c.targets)
        .sort();
    expect(targets('api')).toEqual(apis.map((a) => `${a}:${envOf(a).PORT}`));
    expect(targets('ingest')).toEqual(ingests.map((i) => `${i}:${envOf(i).INGEST_METRICS_PORT}`));
    expect(targets('clickhouse')).toEqual(chNodes.map((n) => `${n}:${textAt(cluster, 'prometheus', 'port')}`));
    expect(prom.scrape_configs.find((j) => j.job_name === 'api')!.authorization!.credentials_file).toBe(envOf('api-1').METRICS_TOKEN_FILE);
    const nginx = read('nginx.conf');
    expect([...nginx.matchAll(/^\s*server (\S+?):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`).sort()).toEqual(apis.map((a) => `${a}:${envOf(a).PORT}`));
    expect(services.lb!.ports).toEqual(['8080:8080']);
  });
});

describe("the cluster's SQL sandbox user (parsed only: no ClickHouse server here)", () => {
  let tmp: string;
  let wh: EmbeddedWarehouse;
  beforeAll(() => {
    tmp = mkdtempSync(path.join(tmpdir(), 'txa-cdeploy-'));
    wh = new EmbeddedWarehouse(path.join(tmp, 'data'));
  });
  afterAll(async () => {
    await wh.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("parses with the engine parser and grants the published tables and their shards' local tables, nothing else", async () => {
    const statements = read('sql-sandbox-user.sql')
      .replace(/^--.*$/gm, '')
      .split(';')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const q of statements) {
      const [row] = await wh.query<{ f: string }>('SELECT formatQuerySingleLine({q:String}) AS f', { params: { q } });
      expect(row!.f.length, q).toBeGreaterThan(0);
    }
    const granted = statements
      .filter((s) => /^GRANT SELECT ON default\./.test(s))
      .map((s) => /ON default\.(\w+)/.exec(s)![1])
      .sort();
    expect(granted).toEqual([...PUBLISHED_TABLES, ...PUBLISHED_TABLES.map(localName)].sort());
    const policy = statements.find((s) => s.startsWith('CREATE ROW POLICY'))!;
    for (const t of granted) expect(policy).toContain(`default.${t}`);
    // The same profile as the single-server file: one set of client SQL limits.
    const single = readFileSync(path.join(root, 'deploy/clickhouse/sql-sandbox-user.sql'), 'utf8');
    const profile = (text: string): string => /CREATE SETTINGS PROFILE[\s\S]*?;/.exec(text)![0];
    expect(profile(read('sql-sandbox-user.sql'))).toBe(profile(single));
  });
});
