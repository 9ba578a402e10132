// What the service ships for Prometheus, judged by Prometheus' own checker (`promtool`, from the
// Debian package scripts/install-system-deps.sh installs): both expositions of a real running
// service with demo data (`/v1/metrics` for users, `/metrics` for the operator) pass
// `promtool check metrics` without a warning; the shipped alert rules pass their own
// `promtool test rules` cases, and replayed over two days of the demo generator's records at
// the default density they stay quiet, then fire on anomalies added to those records.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/load-config.ts';
import { DEMO_DAYS } from '../../core/limits/ingest.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { startApiService, type ApiService } from '../../scripts/daemons/api-service.ts';
import { ADMIN_TOKEN } from '../support/admin-token.ts';
import { inputSeries, rulesTestFile, scrapes, type Scrape } from '../support/alert-series.ts';
import { liveRecord } from '../support/live-records.ts';
import { ACTIVE_PROTOCOLS, PROGRAM_OF } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

const RULES = path.resolve(import.meta.dirname, '..', '..', 'deploy', 'user-metrics', 'protocol-alerts.yml');
const RULES_TESTS = path.resolve(import.meta.dirname, '..', '..', 'deploy', 'user-metrics', 'protocol-alerts.test.yml');
const scratch = mkdtempSync(path.join(tmpdir(), 'txa-promtool-'));

/** `promtool <args>` with `input` on stdin: its exit code and everything it printed. */
function promtool(args: string[], input?: string): { code: number | null; output: string } {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8', cwd: process.cwd() });
  if (r.error) throw r.error;
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

let service: ApiService;
let key: string;

beforeAll(async () => {
  service = await startApiService({ demoRows: 20_000 });
  key = (await service.createKey('enterprise', 'promtool')).key;
  // Records of the last minute, so that both windows (5m, 1h) have fee and compute-unit quantiles.
  const now = Math.floor(Date.now() / 1000);
  const live = ['pump_fun', 'jupiter_v6'].flatMap((p) =>
    Array.from({ length: 12 }, (_, i) => liveRecord({ protocolName: p, programId: PROGRAM_OF[p]! }, now - 60 + i, i)),
  );
  const res = await fetch(`${service.url}/admin/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.adminToken}` },
    body: live.map((r) => JSON.stringify(r)).join('\n'),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}, 240_000);

afterAll(async () => {
  await service?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('promtool check metrics', () => {
  it('passes on /v1/metrics, per protocol and per instruction type, its quantiles included', async () => {
    for (const query of ['', '?instruction_type=swap&instruction_type=buy']) {
      const res = await fetch(`${service.url}/v1/metrics${query}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      for (const name of ['txa_protocol_fee_lamports', 'txa_protocol_compute_units']) {
        for (const window of ['5m', '1h'])
          expect(text, `${name} ${window}${query}`).toMatch(new RegExp(`^${name}\\{[^}]*window="${window}"[^}]*quantile="0\\.95"\\} \\d`, 'm'));
      }
      expect(promtool(['check', 'metrics'], text), query).toEqual({ code: 0, output: '' });
    }
  });

  it("passes on the operator's /metrics", async () => {
    const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^txa_http_request_duration_seconds_bucket\{/m);
    // The ingest pipeline's series (issue 40), present after the ingest above.
    expect(text).toMatch(/^txa_ingest_stage_seconds_bucket\{[^}]*stage="insert"/m);
    expect(text).toMatch(/^txa_ingest_freshness_seconds_bucket\{[^}]*lane="live"/m);
    expect(promtool(['check', 'metrics'], text)).toEqual({ code: 0, output: '' });
  });
});

describe('promtool test rules', () => {
  it('the shipped cases pass (deploy/user-metrics/protocol-alerts.test.yml)', () => {
    expect(promtool(['test', 'rules', RULES_TESTS])).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it("two days of the demo generator's records at the default density raise no alert, live or seeded; anomalies added to them fire", async () => {
    const HOUR = 3600;
    // Records over 50 hours at the density of the default demo (DEMO_ROWS over DEMO_DAYS).
    const start = 1_750_000_000 - (1_750_000_000 % HOUR);
    const hours = 50;
    const total = Math.round((loadConfig({ ADMIN_TOKEN }).demoRows / (DEMO_DAYS * 24)) * hours);
    const s = await startServices();
    let records: IngestRecord[];
    try {
      const text = await demoRecordsNdjson(s.wh, { seed: 42, total, offset: 0, count: total, startTime: start, endTime: start + hours * HOUR });
      records = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as IngestRecord);
    } finally {
      await s.cleanup();
    }
    const shown = records.filter((r) => ACTIVE_PROTOCOLS.includes(r.protocol_name));
    // Live: one scrape a minute from hour 1 (full windows) to hour 49, each record stored at its block time.
    const quietEnd = start + 49 * HOUR;
    // Anomalies in the last hour after 49 h: pump.fun's fees x5, whirlpool stops, jupiter_v6 fails 3 records in 5.
    const anomalous = shown.flatMap((r, i): IngestRecord[] => {
      if (r.block_time <= quietEnd) return [r];
      if (r.protocol_name === 'whirlpool') return [];
      if (r.protocol_name === 'pump_fun') return [{ ...r, fee: r.fee * 5 }];
      if (r.protocol_name === 'jupiter_v6') return [{ ...r, success: i % 5 >= 3 }];
      return [r];
    });
    const per = (rs: readonly IngestRecord[], from: number, to: number, storedAt: (r: IngestRecord) => number): Map<string, Scrape[]> =>
      new Map(
        ACTIVE_PROTOCOLS.map((p) => [
          p,
          scrapes(
            rs.filter((r) => r.protocol_name === p),
            from,
            to,
            storedAt,
          ),
        ]),
      );
    const liveMinutes = (hours - 1) * 60;
    const quietMinutes = 48 * 60;
    // Seeded: the store holds the records of the first 49 hours before Prometheus starts; it ingests nothing after.
    const seeded = shown.filter((r) => r.block_time <= quietEnd);
    const seededMinutes = 26 * 60;
    const file = path.join(scratch, 'demo-shape.test.yml');
    writeFileSync(
      file,
      rulesTestFile(RULES, [
        {
          name: 'the demo ingesting live: quiet for 48 hours, then each anomaly fires',
          series: inputSeries(per(anomalous, start + HOUR, start + hours * HOUR, (r) => r.block_time)),
          expect: [
            { expr: 'count_over_time(ALERTS[48h])', atMinutes: quietMinutes, samples: [] },
            {
              expr: 'count by (alertname, protocol) (ALERTS{alertstate="firing"})',
              atMinutes: liveMinutes,
              samples: [
                { labels: '{alertname="ProtocolDataStale", protocol="whirlpool"}', value: 1 },
                { labels: '{alertname="ProtocolFailureRateHigh", protocol="jupiter_v6"}', value: 1 },
                { labels: '{alertname="ProtocolFeesHigh", protocol="pump_fun"}', value: 1 },
              ],
            },
          ],
        },
        {
          name: 'the demo on its seeded records, not ingesting: quiet',
          series: inputSeries(per(seeded, quietEnd, quietEnd + seededMinutes * 60, () => start)),
          expect: [{ expr: 'count_over_time(ALERTS[26h])', atMinutes: seededMinutes, samples: [] }],
        },
      ]),
    );
    const run = promtool(['test', 'rules', file]);
    expect(run.output.slice(0, 4000)).toContain('SUCCESS');
    expect(run.code).toBe(0);
  }, 120_000);
});
