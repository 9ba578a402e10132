// Seeding an empty store with demo rows at first start, with a visible progress display,
// and keeping seeded demo data live afterwards (ingest/demo-trickle.ts).
import type { Config } from '../core/config/load-config.ts';
import { DEMO_DAYS, PROGRESS_BAR_CHARS } from '../core/limits/ingest.ts';
import type { Logger } from '../core/logger.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { seedDemo, type SeedProgress } from './demo-generator.ts';
import { DemoTrickle, holdsDemoData, type TrickleSink } from './demo-trickle.ts';
import { TABLES } from '../warehouse/tables.ts';

/** Demo data covers the DEMO_DAYS before the current hour. */
export function demoWindow(now = Date.now()): { startTime: number; endTime: number } {
  const endTime = Math.floor(now / 3_600_000) * 3600;
  return { startTime: endTime - DEMO_DAYS * 86_400, endTime };
}

export function progressPrinter(out: NodeJS.WriteStream = process.stderr): (p: SeedProgress) => void {
  return (p) => {
    const pct = Math.floor((p.done / p.total) * 100);
    const rate = p.elapsedMs > 0 ? Math.round(p.done / (p.elapsedMs / 1000)) : 0;
    const bar = '#'.repeat(Math.floor((pct * PROGRESS_BAR_CHARS) / 100)).padEnd(PROGRESS_BAR_CHARS, '.');
    const line = `seeding demo data [${bar}] ${pct}% ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} rows, ${rate.toLocaleString('en-US')} rows/s`;
    if (out.isTTY) out.write(`\r${line}${p.done === p.total ? '\n' : ''}`);
    else out.write(`${line}\n`);
  };
}

/** Seed only when the base table is empty; returns how many rows were generated. */
export async function seedIfEmpty(wh: Warehouse, rows: number, seed: number, onProgress?: (p: SeedProgress) => void): Promise<number> {
  if (rows <= 0) return 0;
  const [r] = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.transactions}`);
  if (Number(r?.n ?? 0) > 0) return 0;
  await seedDemo(wh, { seed, total: rows, ...demoWindow() }, onProgress);
  return rows;
}

/**
 * The demo of an embedded store: seed it when empty (DEMO_ROWS records), then, when it holds
 * the seeded demo data set (seeded now or at an earlier start), keep a trickle of demo records
 * arriving (DEMO_TRICKLE a minute, every DEMO_TRICKLE_INTERVAL_MS; DEMO_TRICKLE=0 is none).
 * Returns the rows seeded now and the running trickle, if any; stop it before the engine closes.
 */
export async function startDemo(
  wh: Warehouse,
  sink: TrickleSink,
  log: Logger,
  config: Pick<Config, 'demoRows' | 'demoSeed' | 'demoTrickle'>,
  onProgress?: (p: SeedProgress) => void,
): Promise<{ seeded: number; trickle: DemoTrickle | undefined }> {
  const seeded = await seedIfEmpty(wh, config.demoRows, config.demoSeed, onProgress);
  if (config.demoRows <= 0 || config.demoTrickle.perMinute <= 0) return { seeded, trickle: undefined };
  if (seeded === 0 && !(await holdsDemoData(wh, config.demoSeed))) {
    log.info('demo trickle: off (the store holds records other than the demo data set of DEMO_SEED)');
    return { seeded, trickle: undefined };
  }
  const trickle = new DemoTrickle(wh, sink, log, { seed: config.demoSeed, ...config.demoTrickle });
  await trickle.start();
  return { seeded, trickle };
}
