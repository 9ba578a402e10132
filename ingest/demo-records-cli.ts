// Writes deterministic demo records as NDJSON to stdout, for POST /admin/ingest, files or
// Kafka. Uses its own temporary embedded engine, so it runs beside a live service.
//   npm run demo-records -- --count 1000 [--seed 7] [--days 30] [--end <unix seconds>]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_DAYS, DEMO_RECORDS_DEFAULT_COUNT, DEMO_RECORDS_DEFAULT_SEED, DEMO_RECORDS_SLICE } from '../core/limits.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { demoRecordsNdjson } from './demo-generator.ts';

function intFlag(name: string, def: number, min: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const raw = process.argv[i + 1];
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min) {
    process.stderr.write(`--${name} needs an integer >= ${min}\n`);
    process.exit(2);
  }
  return Number(raw);
}

async function main(): Promise<void> {
  const count = intFlag('count', DEMO_RECORDS_DEFAULT_COUNT, 1);
  const seed = intFlag('seed', DEMO_RECORDS_DEFAULT_SEED, 0);
  const days = intFlag('days', DEMO_DAYS, 1);
  const end = intFlag('end', Math.floor(Date.now() / 3_600_000) * 3600, 1);
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-demo-'));
  const wh = new EmbeddedWarehouse(dir);
  try {
    for (let offset = 0; offset < count; offset += DEMO_RECORDS_SLICE) {
      const text = await demoRecordsNdjson(wh, {
        seed, total: count, offset, count: Math.min(DEMO_RECORDS_SLICE, count - offset), startTime: end - days * 86_400, endTime: end,
      });
      if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
    }
  } finally {
    await wh.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
