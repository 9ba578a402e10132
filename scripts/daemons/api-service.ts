// The service itself as a child process (api/server/main.ts), for the fuzzers, the soak and the
// tests that need a real listening server in another process: its own data directory, an
// operator token, a key of the asked plan, and a clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stopDaemon } from './free-port.ts';

export interface ApiService {
  url: string;
  adminToken: string;
  child: ChildProcess;
  /** Create an API key of `plan` through the operator API. */
  createKey(plan?: 'free' | 'x402' | 'enterprise', name?: string): Promise<{ id: string; key: string }>;
  stop(): Promise<void>;
}

export interface ApiServiceOptions {
  /** Demo records seeded at the first start (default 20,000). */
  demoRows?: number;
  /**
   * Seed in a first start, stop, and serve from a second start on the seeded store: the
   * service as it runs in steady state, without the seeding's memory and merges (benchmarks
   * that measure the process).
   */
  restartAfterSeeding?: boolean;
  /** More environment for the service (e.g. KAFKA_BROKERS). */
  env?: Record<string, string>;
}

export interface MainProcess {
  child: ChildProcess;
  /** http://host:port the service printed once listening. */
  url: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * The environment of api/server/main.ts as a child: `env` over this process's, on PORT 0 and
 * 127.0.0.1 unless given, and without the demo trickle unless `env` asks for it (DEMO_TRICKLE):
 * a test's records stay the ones it wrote.
 */
export function mainEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DEMO_TRICKLE: '0', ...env };
}

/**
 * Start api/server/main.ts as a child process with `env` over this process's environment (PORT 0
 * and HOST 127.0.0.1 unless given); resolves once it prints the address it listens on.
 * `nodeArgs` go to node after tsx is registered (a heap limit, a test's preload).
 */
export function spawnMain(env: Record<string, string>, timeoutMs = 180_000, nodeArgs: string[] = []): Promise<MainProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'api/server/main.ts'], {
    env: mainEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start in ${timeoutMs / 1000} s:\n${out.slice(-4000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.length > 1_000_000) out = out.slice(-100_000);
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, exited });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before listening:\n${out.slice(-4000)}`));
    });
  });
}

export async function startApiService(opts: ApiServiceOptions = {}): Promise<ApiService> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-service-'));
  const adminToken = randomBytes(24).toString('base64url');
  const env = { DATA_DIR: path.join(dir, 'data'), DEMO_ROWS: String(opts.demoRows ?? 20_000), ADMIN_TOKEN: adminToken, ...opts.env };
  if (opts.restartAfterSeeding === true) {
    const seeding = await spawnMain(env);
    seeding.child.kill('SIGTERM');
    await seeding.exited;
  }
  const { child, url } = await spawnMain(env);
  return {
    url,
    adminToken,
    child,
    async createKey(plan = 'enterprise', name = `service-${plan}`) {
      const res = await fetch(`${url}/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, plan }),
      });
      if (res.status !== 201) throw new Error(`creating a key answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string; key: string };
    },
    stop: () => stopDaemon(child, dir),
  };
}
