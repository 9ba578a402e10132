// GET /v1/metrics as a user's own Prometheus meets it: the figures against sums over the
// records that were ingested (an independent reference), the filters and their refusals,
// the key in every form Prometheus and people send it, and a real Prometheus started from
// the shipped example (deploy/user-metrics/prometheus.yml, only its target and key file
// pointed at this test) that scrapes it, evaluates the shipped alert rules (the failure-rate
// alert goes pending for the failing protocol only) and answers every query of the shipped
// Grafana dashboard. (The rules' behaviour over hours of history: test/daemons/promtool.test.ts.)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { startPrometheusWithConfig, type PrometheusServer } from '../../scripts/daemons/prometheus-server.ts';
import { createKey } from '../support/api-key.ts';
import { ACTIVE_PROTOCOLS, b58, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SHIPPED = path.join(ROOT, 'deploy', 'user-metrics');
const dir = mkdtempSync(path.join(tmpdir(), 'txa-user-metrics-'));

let t: Awaited<ReturnType<typeof startApp>>;
let key: string;
let base: string;
let prom: PrometheusServer | undefined;
let records: IngestRecord[] = [];
let now: number;

/** Records near now (the 5-minute window holds them for four minutes after ingest): pump_amm fails one in two (over 60 records: the shipped failure alert counts 50 at least), whirlpool never, jupiter_v6 only 30 minutes ago, raydium_amm_v4 is inactive. */
function liveRecords(at: number): IngestRecord[] {
  const out: IngestRecord[] = [];
  const add = (protocol: string, i: number, time: number, success: boolean, type: string): void => {
    out.push({
      signature: b58(`live-${protocol}-${i}`, 88),
      instruction_index: 0,
      slot: 400_000_000 + out.length,
      block_time: time,
      program_id: PROGRAM_OF[protocol]!,
      protocol_name: protocol,
      instruction_type: type,
      fee: 5000 + i * 1000,
      compute_units: 30_000 + i * 500,
      accounts_count: 3,
      success,
      ...(success ? {} : { error_message: 'custom program error: 0x1771' }),
    });
  };
  for (let i = 0; i < 60; i++) add('pump_amm', i, at - 60 + i, i % 2 === 0, i < 12 ? 'buy' : 'sell');
  for (let i = 0; i < 20; i++) add('whirlpool', i, at - 40 + i, true, 'swap');
  for (let i = 0; i < 10; i++) add('jupiter_v6', i, at - 1800 + i, i !== 3, 'route');
  for (let i = 0; i < 5; i++) add('raydium_amm_v4', i, at - 40 + i, false, 'swapBaseIn');
  return out;
}

type Sample = { name: string; labels: Record<string, string>; value: number };

function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
      if (m === null) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...m[2]!.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

const pick = (samples: Sample[], name: string, labels: Record<string, string>): number | undefined =>
  samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length,
  )?.value;

async function scrape(query = '', headers: Record<string, string> = { authorization: `Bearer ${key}` }): Promise<Response> {
  return fetch(`${base}/v1/metrics${query}`, { headers });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  t = await startApp();
  key = (await createKey(t.app, 'enterprise', 'prometheus')).key;
  records = await ingestDemo(t.services, 1500);
  now = Math.floor(Date.now() / 1000);
  const live = liveRecords(now);
  await ingest(t.services, live);
  records = [...records, ...live];
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  await t?.cleanup();
});

describe('GET /v1/metrics', () => {
  it("per visible protocol: all-time counters equal to the records' sums, window gauges, freshness", async () => {
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('x-ratelimit-plan')).toBe('enterprise');
    const text = await res.text();
    for (const name of ['txa_protocol_fee_lamports', 'txa_protocol_compute_units']) expect(text).toContain(`# TYPE ${name} summary\n`);
    const samples = parseExposition(text);
    const protocols = [...new Set(samples.filter((s) => s.name === 'txa_protocol_transactions_total').map((s) => s.labels.protocol))];
    expect(protocols.sort()).toEqual([...ACTIVE_PROTOCOLS].sort());
    for (const p of ACTIVE_PROTOCOLS) {
      const mine = records.filter((r) => r.protocol_name === p);
      const sum = (f: (r: IngestRecord) => number): number => mine.reduce((a, r) => a + f(r), 0);
      expect(pick(samples, 'txa_protocol_transactions_total', { protocol: p }), p).toBe(mine.length);
      expect(pick(samples, 'txa_protocol_failed_transactions_total', { protocol: p }), p).toBe(mine.filter((r) => !r.success).length);
      expect(pick(samples, 'txa_protocol_fees_lamports_total', { protocol: p }), p).toBe(sum((r) => r.fee));
      expect(pick(samples, 'txa_protocol_compute_units_total', { protocol: p }), p).toBe(sum((r) => r.compute_units));
      expect(pick(samples, 'txa_protocol_newest_block_time_seconds', { protocol: p }), p).toBe(Math.max(...mine.map((r) => r.block_time)));
      // The percentiles are summaries: _sum and _count over every stored record, in each window's series.
      for (const window of ['5m', '1h']) {
        expect(pick(samples, 'txa_protocol_fee_lamports_sum', { protocol: p, window }), p).toBe(sum((r) => r.fee));
        expect(pick(samples, 'txa_protocol_compute_units_sum', { protocol: p, window }), p).toBe(sum((r) => r.compute_units));
        for (const name of ['txa_protocol_fee_lamports_count', 'txa_protocol_compute_units_count'])
          expect(pick(samples, name, { protocol: p, window }), p).toBe(mine.length);
      }
    }
    expect(pick(samples, 'txa_protocol_window_transactions', { protocol: 'pump_amm', window: '5m' })).toBe(60);
    expect(pick(samples, 'txa_protocol_window_failed_transactions', { protocol: 'pump_amm', window: '5m' })).toBe(30);
    expect(pick(samples, 'txa_protocol_success_ratio', { protocol: 'pump_amm', window: '5m' })).toBe(0.5);
    expect(pick(samples, 'txa_protocol_success_ratio', { protocol: 'whirlpool', window: '1h' })).toBe(1);
    expect(pick(samples, 'txa_protocol_window_transactions', { protocol: 'jupiter_v6', window: '5m' })).toBe(0);
    expect(pick(samples, 'txa_protocol_window_transactions', { protocol: 'jupiter_v6', window: '1h' })).toBe(10);
    expect(pick(samples, 'txa_protocol_success_ratio', { protocol: 'jupiter_v6', window: '1h' })).toBe(0.9);
    // No records in the window: no ratio and no quantiles, rather than a made-up figure.
    expect(pick(samples, 'txa_protocol_success_ratio', { protocol: 'jupiter_v6', window: '5m' })).toBeUndefined();
    expect(pick(samples, 'txa_protocol_fee_lamports', { protocol: 'jupiter_v6', window: '5m', quantile: '0.5' })).toBeUndefined();
    // t-digest quantiles: ordered, and within the window's records.
    const fees = ['0.5', '0.95', '0.99'].map((q) => pick(samples, 'txa_protocol_fee_lamports', { protocol: 'whirlpool', window: '5m', quantile: q })!);
    expect(fees).toEqual([...fees].sort((a, b) => a - b));
    expect(fees[0]).toBeGreaterThanOrEqual(5000);
    expect(fees[2]).toBeLessThanOrEqual(5000 + 19 * 1000);
    const cu = pick(samples, 'txa_protocol_compute_units', { protocol: 'whirlpool', window: '1h', quantile: '0.5' })!;
    expect(cu).toBeGreaterThanOrEqual(30_000);
    expect(cu).toBeLessThanOrEqual(30_000 + 19 * 500);
    // An inactive protocol's records are stored but never shown.
    expect(samples.some((s) => s.labels.protocol === 'raydium_amm_v4')).toBe(false);
  });

  it('protocol= and instruction_type= narrow it (series per instruction type); anything else is refused with 400', async () => {
    const samples = parseExposition(await (await scrape('?protocol=pump_amm&instruction_type=buy&instruction_type=sell')).text());
    expect([...new Set(samples.map((s) => s.labels.protocol))]).toEqual(['pump_amm']);
    const pump = records.filter((r) => r.protocol_name === 'pump_amm');
    for (const type of ['buy', 'sell']) {
      expect(pick(samples, 'txa_protocol_transactions_total', { protocol: 'pump_amm', instruction_type: type })).toBe(
        pump.filter((r) => r.instruction_type === type).length,
      );
    }
    expect(pick(samples, 'txa_protocol_window_transactions', { protocol: 'pump_amm', instruction_type: 'buy', window: '5m' })).toBe(12);
    for (const [query, message] of [
      ['?protocol=raydium_amm_v4', 'protocol[0]: unknown protocol "raydium_amm_v4" (GET /api/v1/stats or JSON-RPC getProtocols lists the available ones)'],
      ['?protocol=Jupiter', 'protocol must be a protocol identifier such as jupiter_v6 (got "Jupiter")'],
      [
        '?instruction_type=swap%20base%20in',
        'instruction_type must be an instruction type: letters, digits and underscores, at most 64 characters (got "swap base in")',
      ],
      ['?window=1d', 'unknown query parameter "window"; accepted: protocol, instruction_type (each repeatable)'],
      [`?${Array.from({ length: 21 }, (_, i) => `instruction_type=t${i}`).join('&')}`, 'instruction_type may be given at most 20 times (got 21)'],
    ] as const) {
      const res = await scrape(query);
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toEqual({ error: 'Bad Request', message });
    }
  });

  it('takes the key as x-api-key, api-key or Bearer; 401 without, 403 for an unknown one; each scrape counts', async () => {
    expect((await scrape('', { 'x-api-key': key })).status).toBe(200);
    expect((await scrape(`?api-key=${encodeURIComponent(key)}`, {})).status).toBe(200);
    const none = await scrape('', {});
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: string }).error).toBe('Unauthorized');
    expect((await scrape('', { authorization: 'Bearer txa_unknown' })).status).toBe(403);
    const a = Number((await scrape()).headers.get('x-ratelimit-remaining'));
    const b = Number((await scrape()).headers.get('x-ratelimit-remaining'));
    expect(b).toBe(a - 1);
  });

  it('is in the OpenAPI document, its protocol parameter naming the active protocols', async () => {
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, { get?: { tags: string[]; parameters: { name: string; schema: unknown }[] } }>;
      components?: { schemas?: Record<string, unknown> };
    };
    const op = doc.paths['/v1/metrics']?.get;
    expect(op?.tags).toEqual(['Metrics']);
    expect(op?.parameters.map((p) => p.name).sort()).toEqual(['instruction_type', 'protocol']);
    // The names are one named enum (components.schemas.ProtocolName), which the parameter refers to.
    const schema = JSON.stringify(op?.parameters.find((p) => p.name === 'protocol')?.schema);
    expect(schema).toContain('#/components/schemas/ProtocolName');
    expect(JSON.stringify(doc.components?.schemas?.ProtocolName)).toContain(JSON.stringify([...ACTIVE_PROTOCOLS].sort()).slice(1, -1));
  });

  it('a real Prometheus from the shipped example scrapes it, its failure-rate alert goes pending for the failing protocol only, and every dashboard query answers', async () => {
    const keyFile = path.join(dir, 'txa_api_key');
    writeFileSync(keyFile, `${key}\n`);
    const shipped = readFileSync(path.join(SHIPPED, 'prometheus.yml'), 'utf8');
    const config = shipped
      .replace('scheme: https', 'scheme: http')
      .replace('"api.example.com"', JSON.stringify(new URL(base).host))
      .replace('/etc/prometheus/txa_api_key', keyFile)
      .replace('- protocol-alerts.yml', `- ${JSON.stringify(path.join(SHIPPED, 'protocol-alerts.yml'))}`)
      .replaceAll(/(scrape_interval|evaluation_interval): 60s/g, '$1: 1s')
      .replace('scrape_timeout: 30s', 'scrape_timeout: 1s');
    expect(config).not.toContain('example.com');
    prom = await startPrometheusWithConfig(config);
    await waitFor('the target up', async () => (await prom!.query('up{job="solana-defi-protocols"}')).some((s) => s.value[1] === '1'));
    const served = await prom.query('txa_protocol_transactions_total');
    expect(served.map((s) => s.metric.protocol).sort()).toEqual([...ACTIVE_PROTOCOLS].sort());

    // The rule as shipped, evaluated by Prometheus itself: pending (its `for` not yet passed) for pump_amm only.
    const rules = parseYaml(readFileSync(path.join(SHIPPED, 'protocol-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    expect(rules.groups[0]!.rules.map((r) => r.alert)).toEqual(['ProtocolFailureRateHigh', 'ProtocolDataStale', 'ProtocolFeesHigh']);
    await waitFor('the failure-rate alert', async () => {
      const res = (await (await fetch(`${prom!.url}/api/v1/alerts`)).json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } };
      return res.data.alerts.some((a) => a.labels.alertname === 'ProtocolFailureRateHigh');
    });
    const alerts = ((await (await fetch(`${prom.url}/api/v1/alerts`)).json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } }).data
      .alerts;
    expect(alerts.filter((a) => a.labels.alertname === 'ProtocolFailureRateHigh').map((a) => [a.labels.protocol, a.state])).toEqual([['pump_amm', 'pending']]);
    const health = (
      (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string }[] }[] } }
    ).data.groups.flatMap((g) => g.rules);
    expect(health.map((r) => [r.name, r.health])).toEqual([
      ['ProtocolFailureRateHigh', 'ok'],
      ['ProtocolDataStale', 'ok'],
      ['ProtocolFeesHigh', 'ok'],
    ]);

    // The dashboard: valid JSON, and every panel's query answers with data (rates need two scrapes).
    const board = JSON.parse(readFileSync(path.join(SHIPPED, 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const exprs = board.panels.flatMap((p) => p.targets.map((x) => ({ panel: p.title, expr: x.expr.replaceAll('$protocol', '.+') })));
    expect(exprs.length).toBeGreaterThan(5);
    await waitFor('two scrapes', async () => (await prom!.query('count_over_time(up{job="solana-defi-protocols"}[1m])')).some((s) => Number(s.value[1]) >= 2));
    for (const { panel, expr } of exprs) expect((await prom.query(expr)).length, `${panel}: ${expr}`).toBeGreaterThan(0);
  }, 120_000);
});
