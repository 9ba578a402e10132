// An export job survives the death of its process: the service (api/server/main.ts as a child
// process) is killed with SIGKILL in the middle of a job, started again on the same data
// and export directories, and the job resumes at its first unwritten chunk and completes;
// no job is left RUNNING. Its files are whole: every sha256 and row count of the manifest
// holds for the files as downloaded.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnMain, type MainProcess } from '../../scripts/daemons/api-service.ts';
import { ADMIN_TOKEN } from '../support/services.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-export-kill-'));
const exportDir = `${dataDir}-exports`;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(exportDir, { recursive: true, force: true });
});

async function startMain(): Promise<MainProcess> {
  const main = await spawnMain(
    {
      DATA_DIR: dataDir,
      EXPORT_DIR: exportDir,
      // Seeded at the first start only (an empty store).
      DEMO_ROWS: '20000',
      ADMIN_TOKEN,
      // Many small chunks: the job is long enough to be killed in the middle.
      EXPORT_FILE_MAX_ROWS: '150',
    },
    120_000,
  );
  children.push(main.child);
  return main;
}

type Job = {
  id: string;
  status: string;
  progress: number;
  rowsWritten: number;
  rowsTotal: number;
  files: { name: string; rows: number; sha256: string; path: string }[];
};

it('resumes a job whose process was killed mid-job (SIGKILL), to complete, whole files', async () => {
  const first = await startMain();
  const created = await fetch(`${first.url}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'exporter', plan: 'enterprise' }),
  });
  const { key } = (await created.json()) as { key: string };
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const job0 = (await (
    await fetch(`${first.url}/v1/exports`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ format: 'PARQUET', splits: { train: 0.8, test: 0.2 }, seed: 1 }),
    })
  ).json()) as Job;
  expect(job0.status).toMatch(/^(QUEUED|RUNNING)$/);

  let seen: Job | undefined;
  for (let i = 0; i < 3000; i++) {
    seen = (await (await fetch(`${first.url}/v1/exports/${job0.id}`, { headers })).json()) as Job;
    if (seen.status === 'RUNNING' && seen.progress >= 10) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(seen?.status).toBe('RUNNING');
  first.child.kill('SIGKILL');
  await first.exited;
  // On disk the job is RUNNING, part-way: the kill came mid-job.
  const onDisk = JSON.parse(readFileSync(path.join(exportDir, 'jobs', `${job0.id}.json`), 'utf8')) as Job & { work: { nextChunk: number; chunks: unknown[] } };
  expect(onDisk.status).toBe('RUNNING');
  expect(onDisk.work.nextChunk).toBeGreaterThan(0);
  expect(onDisk.work.nextChunk).toBeLessThan(onDisk.work.chunks.length);

  const second = await startMain();
  let done: Job | undefined;
  for (let i = 0; i < 6000; i++) {
    done = (await (await fetch(`${second.url}/v1/exports/${job0.id}`, { headers })).json()) as Job;
    if (done.status !== 'RUNNING' && done.status !== 'QUEUED') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(done?.status).toBe('COMPLETED');
  expect(done!.progress).toBe(100);
  expect(done!.progress).toBeGreaterThanOrEqual(seen!.progress);
  expect(done!.rowsWritten).toBe(onDisk.rowsTotal);
  expect(done!.files.reduce((a, f) => a + f.rows, 0)).toBe(onDisk.rowsTotal);
  for (const f of done!.files) {
    const body = Buffer.from(await (await fetch(`${second.url}${f.path}`, { headers })).arrayBuffer());
    expect(createHash('sha256').update(body).digest('hex'), f.name).toBe(f.sha256);
  }
  // Nothing is left RUNNING.
  const list = (await (await fetch(`${second.url}/v1/exports`, { headers })).json()) as { jobs: Job[] };
  expect(list.jobs.filter((j) => j.status === 'RUNNING')).toEqual([]);
  second.child.kill('SIGTERM');
  await second.exited;
}, 300_000);
