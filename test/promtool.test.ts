// What the service ships for Prometheus, judged by Prometheus' own checker (`promtool`, from the
// Debian package scripts/install-system-deps.sh installs): both expositions of a real running
// service with demo data (`/v1/metrics` for users, `/metrics` for the operator) pass
// `promtool check metrics` without a warning.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiService, type ApiService } from '../scripts/daemons/api-service.ts';
import { liveRecord } from './support/live-records.ts';
import { PROGRAM_OF } from './support/fixtures.ts';

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
  const live = ['pump_fun', 'jupiter_v6'].flatMap((p) => Array.from({ length: 12 }, (_, i) => liveRecord({ protocolName: p, programId: PROGRAM_OF[p]! }, now - 60 + i, i)));
  const res = await fetch(`${service.url}/admin/ingest`, {
    method: 'POST', headers: { authorization: `Bearer ${service.adminToken}` }, body: live.map((r) => JSON.stringify(r)).join('\n'),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}, 240_000);

afterAll(async () => {
  await service?.stop();
});

describe('promtool check metrics', () => {
  it('passes on /v1/metrics, per protocol and per instruction type, its quantiles included', async () => {
    for (const query of ['', '?instruction_type=swap&instruction_type=buy']) {
      const res = await fetch(`${service.url}/v1/metrics${query}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      for (const name of ['txa_protocol_fee_lamports', 'txa_protocol_compute_units']) {
        for (const window of ['5m', '1h']) expect(text, `${name} ${window}${query}`).toMatch(new RegExp(`^${name}\\{[^}]*window="${window}"[^}]*quantile="0\\.95"\\} \\d`, 'm'));
      }
      expect(promtool(['check', 'metrics'], text), query).toEqual({ code: 0, output: '' });
    }
  });

  it('passes on the operator\'s /metrics', async () => {
    const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^txa_http_request_duration_seconds_bucket\{/m);
    expect(promtool(['check', 'metrics'], text)).toEqual({ code: 0, output: '' });
  });
});
