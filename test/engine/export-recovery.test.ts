// What a new process makes of the jobs an old one left (the restart half of "jobs survive
// a restart", in-process; test/daemons/export-restart.test.ts kills a real process): QUEUED jobs
// run, a RUNNING job resumes to COMPLETED, and a job interrupted EXPORT_MAX_ATTEMPTS times is
// FAILED with the reason rather than started again. Nothing stays RUNNING.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DownloadLinks } from '../../api/services/exports/download-links.ts';
import { ExportService, type ExportServiceDeps } from '../../api/services/exports/export-service.ts';
import { EXPORT_MAX_ATTEMPTS } from '../../core/limits/exports.ts';
import { JobStore } from '../../api/services/exports/job-store.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { demoRecords, ingest } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
const dir = mkdtempSync(path.join(tmpdir(), 'txa-export-recovery-'));
const owner = { id: 'key-1', plan: 'enterprise' as const };

beforeAll(async () => {
  s = await startServices();
  await ingest(s, await demoRecords(s, 1000));
});
afterAll(async () => {
  await s.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const deps = (sessions: EmbeddedWarehouse[]): ExportServiceDeps => ({
  config: { ...s.config.exports, dir, fileMaxRows: 100 },
  store: new JobStore(dir),
  sessions,
  sandbox: s.sqlSandbox,
  visibleProtocols: () => s.analytics.protocols(),
  keyStatus: async () => 'active',
  links: new DownloadLinks('recovery-test-secret'),
  tokens: s.pageTokens,
  logger: s.logger,
});

it('runs QUEUED jobs, resumes a RUNNING one, fails one interrupted too often', async () => {
  // An old process without workers: its jobs stay QUEUED; two are then marked as if it died running them.
  const old = new ExportService(deps([]));
  const queued = await old.create(owner, { format: 'CSV', columns: ['signature'] });
  const resumed = await old.create(owner, { format: 'JSONL', columns: ['fee'] });
  const hopeless = await old.create(owner, { format: 'CSV', columns: ['fee'] });
  const store = new JobStore(dir);
  for (const [id, attempts] of [
    [resumed.id, 1],
    [hopeless.id, EXPORT_MAX_ATTEMPTS],
  ] as const) {
    const job = store.get(id)!;
    job.status = 'RUNNING';
    job.attempts = attempts;
    store.save(job);
  }

  const session = new EmbeddedWarehouse(s.config.dataDir);
  const fresh = new ExportService(deps([session]));
  fresh.start();
  expect(fresh.get(owner, hopeless.id).status).toBe('FAILED');
  expect(fresh.get(owner, hopeless.id).error).toMatch(/the service stopped 3 times while this job ran/);
  for (let i = 0; i < 500 && (fresh.stats().running > 0 || fresh.stats().queued > 0); i++) await new Promise((r) => setTimeout(r, 20));
  for (const id of [queued.id, resumed.id]) {
    const job = fresh.get(owner, id);
    expect(job.status, job.error ?? '').toBe('COMPLETED');
    expect(job.rowsWritten).toBe(job.rowsTotal);
    expect(job.files.length).toBeGreaterThan(1);
  }
  expect(fresh.list(owner).jobs.filter((j) => j.status === 'RUNNING')).toEqual([]);
  await fresh.close();
  await session.close();
});
