// A real Prometheus (the Debian package's binary; scripts/install-system-deps.sh) on a
// random port, with a generated config that scrapes one target every second using a
// bearer token, started and stopped by a test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, stopDaemon } from './free-port.ts';

export interface PrometheusServer {
  url: string;
  /** Instant query through the HTTP API; returns the result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(target: { host: string; port: number; bearerToken: string }): Promise<PrometheusServer> {
  const config = `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: txa
    scrape_interval: 1s
    scrape_timeout: 1s
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: ${JSON.stringify(target.bearerToken)}
    static_configs:
      - targets: [${JSON.stringify(`${target.host}:${target.port}`)}]
`;
  return startPrometheusWithConfig(config);
}

/** A real Prometheus running `config` (a prometheus.yml text, e.g. the shipped one with test targets). */
export async function startPrometheusWithConfig(config: string): Promise<PrometheusServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-prom-'));
  writeFileSync(path.join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${output}`);
    if (Date.now() > deadline) throw new Error(`prometheus not ready: ${output}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as { status: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] }; error?: string };
      if (body.status !== 'success') throw new Error(`prometheus query failed: ${body.error ?? res.status}`);
      return body.data?.result ?? [];
    },
    stop: () => stopDaemon(child, dir),
  };
}
