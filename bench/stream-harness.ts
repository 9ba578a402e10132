// What the live-stream benchmarks share (subscription-fanout.ts, stream-resume.ts): enough
// keys for the streams, a forked client process that holds them (so the server's event loop
// is measured alone), distinct demo signatures for the records each write ingests, and the
// entry point that runs either side.
import { fork } from 'node:child_process';
import { PLAN_STREAMS } from '../core/plans.ts';
import type { BenchServer } from './bench-server.ts';

/** The p-th percentile (nearest rank) of xs; NaN for none. */
export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** Enterprise keys enough that none holds more than its cap of open streams (the server's own first). */
export async function streamKeys(server: BenchServer, streams: number, label: string): Promise<string[]> {
  const keys: string[] = [server.headers['x-api-key']!];
  while (keys.length < Math.ceil(streams / PLAN_STREAMS.enterprise)) {
    const res = await server.app.inject({
      method: 'POST',
      url: '/admin/keys',
      headers: { authorization: `Bearer ${server.services.config.adminToken}` },
      payload: { name: `${label}-${keys.length}`, plan: 'enterprise' },
    });
    keys.push((res.json() as { key: string }).key);
  }
  return keys;
}

/** `file` forked as the client with `job`; its messages as they come, and a wait for one that matters. */
export function forkClient<M>(file: string, job: unknown) {
  const child = fork(file, ['client', JSON.stringify(job)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages: M[] = [];
  let wake: (() => void) | undefined;
  child.on('message', (m) => {
    messages.push(m as M);
    wake?.();
  });
  const waitFor = (pred: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => (pred() ? resolve() : void (wake = check));
      check();
    });
  return { child, messages, waitFor };
}

/** Distinct, valid-looking base58 signatures, one per call, and how many were made. */
export function signatures(): { next(): string; count(): number } {
  const b58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let made = 0;
  return {
    next() {
      let n = made++;
      let s = '';
      for (let i = 0; i < 12; i++) {
        s += b58[n % 58];
        n = Math.floor(n / 58);
      }
      return `${'1'.repeat(76)}${s}`;
    },
    count: () => made,
  };
}

/** Run `main`, or, in the forked child (`client <job>`), `client(job)`; a failure prints its stack and exits 1. */
export function runStreamBench<J>(main: () => Promise<void>, client: (job: J) => Promise<void>): void {
  const fail =
    (side: string) =>
    (err: unknown): void => {
      process.stderr.write(`${side}${(err as Error).stack}\n`);
      process.exit(1);
    };
  if (process.argv[2] === 'client') client(JSON.parse(process.argv[3]!) as J).catch(fail('client: '));
  else main().catch(fail(''));
}
