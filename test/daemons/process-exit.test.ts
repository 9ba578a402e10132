// Crash means exit (docs/reliability.md, "A crash ends the process"): the real service
// (api/server/main.ts as a child process, the embedded engine open) that meets a fatal error ends
// within seconds, never lingering on its port. The crashes are set off by a test-only preload
// (test/support/crash-trigger.ts) on SIGUSR2, so the service runs its own code unchanged.
// Before the fix each of these outlived its deadline: the engine's SIGABRT handler held an
// aborting process for 300 s, and process.exit() waited for the engine's running statement.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnMain } from '../../scripts/daemons/api-service.ts';
import { ADMIN_TOKEN } from '../support/services.ts';

/** Generous: every one of these ends in about a second when it works. */
const EXIT_DEADLINE_MS = 15_000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Service {
  child: ChildProcess;
  url: string;
  /** Everything it printed since it listened. */
  output: () => string;
  /** How it ended, or 'still running' at the deadline. */
  ended: (withinMs?: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'>;
}

async function start(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Service> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-exit-'));
  dirs.push(dir);
  const main = await spawnMain({ DATA_DIR: path.join(dir, 'data'), EXPORT_DIR: path.join(dir, 'exports'), DEMO_ROWS: '0', ADMIN_TOKEN, ...env }, 120_000, [
    '--import',
    './test/support/crash-trigger.ts',
    ...nodeArgs,
  ]);
  children.push(main.child);
  let out = '';
  main.child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  main.child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  // 'close', not 'exit': the last words may still be in the pipes when 'exit' comes.
  const closed = new Promise<void>((r) => main.child.once('close', () => r()));
  return {
    child: main.child,
    url: main.url,
    output: () => out,
    ended: async (withinMs = EXIT_DEADLINE_MS) => {
      const timeout = new Promise<'still running'>((r) => setTimeout(() => r('still running'), withinMs).unref());
      const exited = closed.then(() => ({ code: main.child.exitCode, signal: main.child.signalCode }));
      return Promise.race([exited, timeout]);
    },
  };
}

/** Ended, and not as a clean exit: a supervisor sees a failure and restarts it. */
function expectCrashExit(end: Awaited<ReturnType<Service['ended']>>, output: string): void {
  expect(end, output.slice(-3000)).not.toBe('still running');
  if (end === 'still running') return;
  expect(end.code === 0 && end.signal === null, JSON.stringify(end)).toBe(false);
}

it('a server past its heap limit exits at once instead of lingering on its port', async () => {
  const service = await start({ CRASH_TRIGGER: 'heap' }, ['--max-old-space-size=192']);
  service.child.kill('SIGUSR2');
  const end = await service.ended();
  expectCrashExit(end, service.output());
  expect(service.output()).toMatch(/heap/i);
});

it('SIGABRT ends a server whose engine is open', async () => {
  const service = await start();
  expect((await fetch(`${service.url}/health`)).status).toBe(200);
  service.child.kill('SIGABRT');
  const end = await service.ended();
  expectCrashExit(end, service.output());
  expect(end).toMatchObject({ signal: 'SIGABRT' });
});

it('SIGTERM with a request in flight and a statement running in the engine ends within the shutdown deadline', async () => {
  const service = await start({ CRASH_TRIGGER: 'none', CRASH_ENGINE_BUSY: '1', SHUTDOWN_TIMEOUT_MS: '2000' });
  service.child.kill('SIGUSR2');
  // A request whose body is still arriving: the graceful drain waits for it until the deadline.
  const u = new URL(`${service.url}/admin/ingest`);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
  });
  req.on('error', () => undefined);
  req.write('{"signature":');
  await new Promise((r) => setTimeout(r, 1000));
  service.child.kill('SIGTERM');
  const end = await service.ended(2000 + EXIT_DEADLINE_MS);
  req.destroy();
  expectCrashExit(end, service.output());
  expect(service.output()).toContain('shutdown timed out');
});

it.each(['throw', 'reject'])('an uncaught error (%s) while the engine works ends the process, saying why', async (trigger) => {
  const service = await start({ CRASH_TRIGGER: trigger, CRASH_ENGINE_BUSY: '1' });
  service.child.kill('SIGUSR2');
  const end = await service.ended();
  expectCrashExit(end, service.output());
  expect(service.output()).toContain('crash-trigger: ');
});

it('a stuck event loop is ended by the watchdog, SIGTERM unanswered or not', async () => {
  const service = await start({ CRASH_TRIGGER: 'stall', PROCESS_STALL_EXIT_MS: '2000' });
  service.child.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 1000));
  // The loop runs no listener now: SIGTERM alone cannot end it.
  service.child.kill('SIGTERM');
  const end = await service.ended();
  expectCrashExit(end, service.output());
  expect(end).toMatchObject({ signal: 'SIGKILL' });
  expect(service.output()).toContain('PROCESS_STALL_EXIT_MS');
});
