// Graceful shutdown of the real entry point (api/server/main.ts as a child process): on SIGTERM
// a request still being received is answered, buffered usage is written before exit, and
// the process exits 0. Checked by starting the service again on the same data directory.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnMain, type MainProcess } from '../../scripts/daemons/api-service.ts';
import { ADMIN_TOKEN } from '../support/services.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-shutdown-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** Start api/server/main.ts on this test's data; resolves with its address once it prints it. */
async function startMain(): Promise<MainProcess> {
  const main = await spawnMain(
    {
      DATA_DIR: dataDir,
      DEMO_ROWS: '0',
      ADMIN_TOKEN,
      // Only the shutdown flush can write usage within this test.
      USAGE_FLUSH_MS: '300000',
    },
    60_000,
  );
  children.push(main.child);
  return main;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const base58 = (n: number): string => Array.from(randomBytes(n), (b) => B58[b % 58]).join('');
const record = (i: number): string =>
  JSON.stringify({
    signature: base58(88),
    slot: 250_000_000 + i,
    block_time: Math.floor(Date.now() / 1000) - 60,
    program_id: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
    protocol_name: 'jupiter_v6',
    instruction_type: 'route',
    fee: 5000,
    compute_units: 100_000,
    accounts_count: 0,
    success: true,
  });

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

it('finishes in-flight requests, flushes usage and exits 0 on SIGTERM', async () => {
  const first = await startMain();
  const created = await fetch(`${first.url}/admin/keys`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'shutdown', plan: 'free' }),
  });
  const { id, key } = (await created.json()) as { id: string; key: string };
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${first.url}/api/v1/not-here-yet`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(404);
  }

  // An ingest whose body is still arriving when SIGTERM comes.
  const lines = Array.from({ length: 20 }, (_, i) => record(i));
  const u = new URL(`${first.url}/admin/ingest`);
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...admin, 'content-type': 'application/x-ndjson' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write(`${lines.slice(0, 10).join('\n')}\n`);
    setTimeout(() => {
      first.child.kill('SIGTERM');
      setTimeout(() => req.end(`${lines.slice(10).join('\n')}\n`), 300);
    }, 300);
  });
  const res = await answer;
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body), res.body).toMatchObject({ accepted: 20, rejected: 0 });
  expect(await first.exited).toBe(0);

  // The usage buffered in the first process was written at shutdown.
  const second = await startMain();
  const usage = await fetch(`${second.url}/admin/keys/${id}/usage?granularity=day`, { headers: admin });
  const rows = ((await usage.json()) as { data: { interface: string; method: string; requests: number; errors: number }[] }).data;
  // A path no route answers has no route policy to name its interface: counted under `other` (docs/access.md).
  expect(rows).toEqual([expect.objectContaining({ interface: 'other', method: 'GET (unmatched)', requests: 3, errors: 3 })]);
  const health = (await (await fetch(`${second.url}/health`)).json()) as { checks: { ingest: { secondsSinceLastIngest: number } } };
  expect(health.checks.ingest.secondsSinceLastIngest).toBeLessThan(120);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
