// Fault drill: the disk under the store fills up during ingest. Promise: the write is
// refused with a clear 507 (never a 500), nothing is corrupted (the views agree with the
// base table once the journal has repaired the write that stopped part-way), and ingest
// works again as soon as space returns. The store sits on a small tmpfs of its own, which
// needs the right to mount (root in the test machine): where that is not allowed the test
// is skipped, and its name says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/server/app.ts';
import { createServices, type Services } from '../../api/server/services.ts';
import { loadConfig } from '../../core/config/load-config.ts';
import { createLogger } from '../../core/logger.ts';
import { ADMIN_TOKEN } from '../support/admin-token.ts';
import { adminHeaders } from '../support/api-key.ts';
import { demoRecords } from '../support/fixtures.ts';

const mountPoint = mkdtempSync(path.join(tmpdir(), 'txa-diskfull-'));
const mount = (size: string, remount = false): boolean => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `${remount ? 'remount,' : ''}size=${size}`, 'tmpfs', mountPoint], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const canMount = mount('40m');

let services: Services;
let app: FastifyInstance;

beforeAll(async () => {
  if (!canMount) return;
  const config = loadConfig({ DATA_DIR: path.join(mountPoint, 'data'), DEMO_ROWS: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent' });
  services = await createServices(config, createLogger('silent'));
  app = await buildApp(services);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await services?.close();
  if (canMount) execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

const post = (ndjson: string) =>
  app.inject({ method: 'POST', url: '/admin/ingest', headers: { ...adminHeaders(), 'content-type': 'application/x-ndjson' }, payload: ndjson });
const count = async (sql: string): Promise<number> => Number((await services.wh.query<{ n: string }>(sql))[0]!.n);

it.runIf(canMount)(
  'refuses a write on a full disk with 507, keeps the store consistent, and ingests again once space returns (needs a tmpfs mount)',
  async () => {
    let full: Awaited<ReturnType<typeof post>> | undefined;
    let failed = '';
    for (let seed = 1; seed <= 40 && full === undefined; seed++) {
      const body = (await demoRecords(services, 20_000, seed)).map((r) => JSON.stringify(r)).join('\n');
      const res = await post(body);
      if (res.statusCode !== 200) {
        full = res;
        failed = body;
      }
    }
    expect(full, 'the 40 MiB disk never filled').toBeDefined();
    expect(full!.statusCode).toBe(507);
    expect(full!.headers['retry-after']).toBe('60');
    expect(full!.json()).toEqual({ error: 'Insufficient Storage', message: expect.stringMatching(/out of disk space.*send it again once space is freed/) });

    // Space returns; the same body again is accepted (what was stored counts as duplicates),
    // and the journal has made every view agree with the base table.
    expect(mount('512m', true)).toBe(true);
    const again = await post(failed);
    expect(again.statusCode, again.body).toBe(200);
    const base = await count('SELECT count() AS n FROM transactions');
    expect(again.json().accepted + again.json().duplicates).toBe(20_000);
    expect(await count('SELECT count() AS n FROM tx_rid_by_sig')).toBe(base);
    expect(await count('SELECT sum(tx_count) AS n FROM protocol_hourly')).toBe(base);
    expect(await count('SELECT sum(tx_count) AS n FROM instruction_hourly')).toBe(base);
    expect(await count('SELECT uniqExact(signature, instruction_index) AS n FROM transactions')).toBe(base);
    // And the service answers from it.
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
  },
  300_000,
);
