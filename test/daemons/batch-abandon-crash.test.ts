// Issue 35, finding 1: abandoned MCP batches crashed the process. Free keys POSTed /mcp a batch
// of 100 tools/call getTransactions {options: {limit: 10000}} (about 3.6 MB an answer) and went
// away after 300 ms; every call still ran and built its answer (360 MB a batch) until the heap
// limit ended the process. Here the real service (api/server/main.ts as a child process) runs on a small
// heap: with every member's answer reserved before it is built (api/services/answers/answer-batch.ts) and
// none started once its client is gone, it serves another key's request after the attack.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnMain } from '../../scripts/daemons/api-service.ts';
import { ADMIN_TOKEN } from '../support/services.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const bigBatch = JSON.stringify(
  Array.from({ length: 100 }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'getTransactions', arguments: { options: { limit: 10_000 } } },
  })),
);

async function createKey(url: string, plan: string, name: string): Promise<string> {
  const res = await fetch(`${url}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, plan }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

/** POST the batch and go away after `ms` (or read the answer when it comes first). */
async function abandoned(url: string, key: string, ms: number): Promise<void> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': key }, body: bigBatch, signal: abort.signal });
    await res.arrayBuffer();
  } catch {
    // Aborted: the client is gone, as in the review.
  } finally {
    clearTimeout(timer);
  }
}

it('abandoned MCP batches of free keys leave the service up on a small heap', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-batch-crash-'));
  dirs.push(dir);
  // 12,000 records: each call's answer is 10,000 records (about 3.6 MB), as in the review.
  const main = await spawnMain({ DATA_DIR: path.join(dir, 'data'), EXPORT_DIR: path.join(dir, 'exports'), DEMO_ROWS: '12000', ADMIN_TOKEN }, 240_000, [
    '--max-old-space-size=320',
  ]);
  children.push(main.child);
  let out = '';
  main.child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const keys = await Promise.all([1, 2, 3, 4].map((n) => createKey(main.url, 'free', `attacker-${n}`)));
  const probe = await createKey(main.url, 'enterprise', 'probe');
  // Six rounds of four batches at once (2.4 k calls): before the fix the heap passed 320 MB in the first.
  for (let round = 0; round < 6; round++) {
    await Promise.all(keys.map((k) => abandoned(main.url, k, 300)));
    expect(main.child.exitCode, out.slice(-2000)).toBeNull();
  }
  // A batch read to the end stays within the door's budget: members past it are refused, not built.
  const whole = await fetch(`${main.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': probe }, body: bigBatch });
  expect(whole.status).toBe(200);
  const answers = (await whole.json()) as { result: { isError?: boolean; _meta?: Record<string, { code: string }> } }[];
  expect(answers).toHaveLength(100);
  const refused = answers.filter((a) => a.result.isError === true);
  expect(refused.length).toBeGreaterThan(50);
  for (const a of refused) expect(a.result._meta?.['txa/error']?.code).toBe('ERR_RESPONSE_TOO_LARGE');
  const health = await fetch(`${main.url}/health`);
  expect(health.status).toBe(200);
  expect(main.child.exitCode, out.slice(-2000)).toBeNull();
}, 600_000);
