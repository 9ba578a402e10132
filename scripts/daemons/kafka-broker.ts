// A real Kafka broker for a test file, started and stopped through scripts/kafka.sh (the
// same script the docs use) on a free loopback port, in a temporary directory.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'kafka.sh');

export { freePort };

export interface TestBroker {
  /** host:port, as KAFKA_BROKERS takes it. */
  brokers: string;
  dir: string;
  /** Stop the broker (clean shutdown); its data stays. */
  stop(): Promise<void>;
  /** Start it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stop and delete its data. */
  cleanup(): Promise<void>;
}

export async function startBroker(): Promise<TestBroker> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-kafka-'));
  const port = await freePort();
  const script = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('bash', [SCRIPT, ...args, '--dir', dir], { timeout: 180_000 });
    return stdout;
  };
  const out = await script('start', '--port', String(port));
  const brokers = /KAFKA_BROKERS=(\S+)/.exec(out)?.[1];
  if (brokers === undefined) throw new Error(`kafka.sh start printed no KAFKA_BROKERS line: ${out}`);
  return {
    brokers,
    dir,
    stop: async () => void (await script('stop')),
    start: async () => void (await script('start')),
    cleanup: async () => {
      await script('stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Poll until `check` returns true, or fail after `timeoutMs` naming what was awaited. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
