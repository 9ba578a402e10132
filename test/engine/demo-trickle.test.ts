// The demo's live trickle (ingest/demo-trickle.ts): on seeded demo data, demo records keep
// arriving through the pipeline, newer than the seeded ones, so the Live page and alerts
// behave as on a real deployment; off with DEMO_TRICKLE=0, without demo data (DEMO_ROWS=0, or
// a store of other records), and in the test suite's own servers unless a test asks for it.
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/load-config.ts';
import { DEMO_TRICKLE_MAX_PER_MINUTE } from '../../core/limits/ingest.ts';
import { createLogger } from '../../core/logger.ts';
import type { DemoTrickle } from '../../ingest/demo-trickle.ts';
import { startDemo } from '../../ingest/seed.ts';
import { readFreshness } from '../../warehouse/ingest-freshness.ts';
import { mainEnv } from '../../scripts/daemons/api-service.ts';
import { hotRecords, ingest } from '../support/fixtures.ts';
import { startServices, testConfig } from '../support/services.ts';

const log = createLogger('silent');
// chDB opens one data directory per process: one set of services at a time, closed when done.
let current: { cleanup(): Promise<void> } | undefined;
const trickles: DemoTrickle[] = [];
afterAll(async () => {
  for (const t of trickles) await t.stop();
  await current?.cleanup();
});

async function services(env: Record<string, string>) {
  await current?.cleanup();
  const s = await startServices(env);
  current = s;
  return s;
}

const count = async (s: Awaited<ReturnType<typeof services>>): Promise<number> =>
  Number((await s.wh.query<{ n: string }>('SELECT count() AS n FROM transactions'))[0]!.n);

describe('the demo trickle', () => {
  it('keeps seeded demo data live: each write adds records newer than the newest stored, through the pipeline', async () => {
    const s = await services({ DEMO_ROWS: '3000', DEMO_TRICKLE: '120', DEMO_TRICKLE_INTERVAL_MS: '50' });
    const demo = await startDemo(s.wh, s.pipeline, log, s.config);
    expect(demo.seeded).toBe(3000);
    const trickle = demo.trickle!;
    expect(trickle).toBeDefined();
    trickles.push(trickle);
    // A couple of writes (a write comes once a new second holds records due): counted, not timed.
    await expect.poll(() => trickle.writes, { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    const afterTwo = { writes: trickle.writes, records: trickle.records, newest: (await readFreshness(s.wh)).newestBlockTime! };
    expect(afterTwo.records).toBeGreaterThanOrEqual(afterTwo.writes);
    await expect.poll(() => trickle.writes, { timeout: 30_000, interval: 50 }).toBeGreaterThan(afterTwo.writes);
    await trickle.stop();
    // Every trickled record is stored, none repeats a seeded one, and each write is newer than the last.
    expect(await count(s)).toBe(3000 + trickle.records);
    expect(trickle.records).toBeGreaterThan(afterTwo.records);
    expect((await readFreshness(s.wh)).newestBlockTime!).toBeGreaterThan(afterTwo.newest);
    // The pipeline counted them as the demo source (txa_ingest_records_total{source="demo"}).
    expect(await s.metrics.registry.metrics()).toMatch(new RegExp(`txa_ingest_records_total\\{source="demo",outcome="accepted"\\} ${trickle.records}\\b`));
    // A restart on the seeded store: nothing seeded again, and the trickle goes on.
    const again = await startDemo(s.wh, s.pipeline, log, s.config);
    expect(again.seeded).toBe(0);
    expect(again.trickle).toBeDefined();
    trickles.push(again.trickle!);
    await again.trickle!.stop();
  });

  it('is off with DEMO_TRICKLE=0, without demo data (DEMO_ROWS=0), and on a store of other records', async () => {
    const off = await services({ DEMO_ROWS: '500', DEMO_TRICKLE: '0' });
    expect(await startDemo(off.wh, off.pipeline, log, off.config)).toEqual({ seeded: 500, trickle: undefined });
    const none = await services({ DEMO_ROWS: '0' });
    expect(await startDemo(none.wh, none.pipeline, log, none.config)).toEqual({ seeded: 0, trickle: undefined });
    // DEMO_ROWS left at its default over a store of real records: not seeded, and no demo records mixed in.
    const real = await services({ DEMO_ROWS: '500', DEMO_TRICKLE: '600' });
    await ingest(real, hotRecords('real', 20));
    const before = await count(real);
    expect(await startDemo(real.wh, real.pipeline, log, real.config)).toEqual({ seeded: 0, trickle: undefined });
    expect(await count(real)).toBe(before);
  });

  it("is never on in the test suite's own servers unless a test asks (in-process and child services)", () => {
    expect(testConfig().demoTrickle.perMinute).toBe(0);
    expect(mainEnv({ DEMO_ROWS: '20000' }).DEMO_TRICKLE).toBe('0');
    expect(mainEnv({ DEMO_TRICKLE: '60' }).DEMO_TRICKLE).toBe('60');
  });

  it("runs by default at the seeded data's own rate (DEMO_ROWS over 30 days), every 5 s; the settings are checked", () => {
    const dflt = loadConfig({ DEMO_ROWS: '2000000', ADMIN_TOKEN: 'x'.repeat(32) });
    expect(dflt.demoTrickle).toEqual({ perMinute: Math.ceil(2_000_000 / (30 * 24 * 60)), intervalMs: 5000 });
    expect(loadConfig({ DEMO_ROWS: '0', ADMIN_TOKEN: 'x'.repeat(32) }).demoTrickle.perMinute).toBe(0);
    expect(loadConfig({ DEMO_ROWS: '10000000000', ADMIN_TOKEN: 'x'.repeat(32) }).demoTrickle.perMinute).toBe(DEMO_TRICKLE_MAX_PER_MINUTE);
    expect(() => loadConfig({ DEMO_TRICKLE: 'lots', DEMO_TRICKLE_INTERVAL_MS: '1', ADMIN_TOKEN: 'x'.repeat(32) })).toThrow(
      /DEMO_TRICKLE must be [\s\S]*DEMO_TRICKLE_INTERVAL_MS must be between 10 and 3600000, got 1/,
    );
  });
});
