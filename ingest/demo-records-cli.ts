// Writes deterministic demo records as NDJSON to stdout, for POST /admin/ingest, files or
// Kafka. Uses its own temporary embedded engine, so it runs beside a live service.
//   npm run demo-records -- --count 1000 [--seed 7] [--days 30] [--end <unix seconds>]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

const count = intFlag('count', 1000, 1);
const seed = intFlag('seed', 7, 0);
const days = intFlag('days', 30, 1);
const end = intFlag('end', Math.floor(Date.now() / 3_600_000) * 3600, 1);
const dir = mkdtempSync(path.join(tmpdir(), 'txa-demo-'));
const wh = new EmbeddedWarehouse(dir);
try {
  const slice = 100_000; // bounded memory: one slice of NDJSON at a time
  for (let offset = 0; offset < count; offset += slice) {
    const text = await demoRecordsNdjson(wh, {
      seed, total: count, offset, count: Math.min(slice, count - offset), startTime: end - days * 86_400, endTime: end,
    });
    if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
  }
} finally {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
}
