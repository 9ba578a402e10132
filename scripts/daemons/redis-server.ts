// A real redis-server (the Debian package's binary; scripts/install-system-deps.sh) on a
// random port with no persistence, started and stopped by a test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, stopDaemon } from './free-port.ts';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Start it again on the same port (empty: no persistence), after stop(). */
  restart(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child = await launch(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => child.stop(),
    restart: async () => {
      child = await launch(port);
    },
  };
}

async function launch(port: number): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  await waitForPort(port, child, () => output);
  return { stop: () => stopDaemon(child, dir) };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const { Socket } = await import('node:net');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      s.connect(port, '127.0.0.1');
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not listen on ${port}: ${output()}`);
}
