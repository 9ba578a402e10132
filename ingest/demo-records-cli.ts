// Writes deterministic demo records as NDJSON to stdout, for POST /admin/ingest, files or
// Kafka. Uses its own temporary embedded engine, so it runs beside a live service.
//   npm run demo-records -- --count 1000 [--seed 7] [--days 30] [--end <unix seconds>]
// --help prints the usage (exit 0); an unknown or malformed flag prints it to stderr (exit 2),
// so a mistyped flag never writes a thousand records nobody asked for.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO_DAYS, DEMO_RECORDS_DEFAULT_COUNT, DEMO_RECORDS_DEFAULT_SEED, DEMO_RECORDS_SLICE } from '../core/limits/ingest.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { demoRecordsNdjson } from './demo-generator.ts';

export const USAGE = `usage: npm run -s demo-records -- [options] > records.ndjson
Writes deterministic demo records (one JSON object a line) to stdout, for
POST /admin/ingest, a file or Kafka. Runs its own temporary engine: safe beside a live service.
  --count N   records to write (default ${DEMO_RECORDS_DEFAULT_COUNT})
  --seed N    generator seed: the same seed and window give the same records (default ${DEMO_RECORDS_DEFAULT_SEED})
  --days N    block times spread over the N days before --end (default ${DEMO_DAYS})
  --end T     end of the window, Unix seconds (default: the start of the current hour)
  -h, --help  print this and exit`;

export interface DemoRecordsFlags {
  count: number;
  seed: number;
  days: number;
  end: number;
}

/** What the command line asks: the usage, or records; a UsageError for anything else. */
export type DemoRecordsCommand = { help: true } | { help: false; flags: DemoRecordsFlags };

export class UsageError extends Error {}

/** Parse the flags (`now`: milliseconds, for the default end). Pure: no output, no exit. */
export function parseDemoRecordsArgs(argv: readonly string[], now = Date.now()): DemoRecordsCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        count: { type: 'string' },
        seed: { type: 'string' },
        days: { type: 'string' },
        end: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help === true) return { help: true };
  const int = (name: 'count' | 'seed' | 'days' | 'end', def: number, min: number): number => {
    const raw = values[name];
    if (raw === undefined) return def;
    if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
      throw new UsageError(`--${name} needs a whole number >= ${min}, got "${String(raw)}"`);
    }
    return Number(raw);
  };
  return {
    help: false,
    flags: {
      count: int('count', DEMO_RECORDS_DEFAULT_COUNT, 1),
      seed: int('seed', DEMO_RECORDS_DEFAULT_SEED, 0),
      days: int('days', DEMO_DAYS, 1),
      end: int('end', Math.floor(now / 3_600_000) * 3600, 1),
    },
  };
}

async function writeRecords({ count, seed, days, end }: DemoRecordsFlags): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-demo-'));
  const wh = new EmbeddedWarehouse(dir);
  try {
    for (let offset = 0; offset < count; offset += DEMO_RECORDS_SLICE) {
      const text = await demoRecordsNdjson(wh, {
        seed,
        total: count,
        offset,
        count: Math.min(DEMO_RECORDS_SLICE, count - offset),
        startTime: end - days * 86_400,
        endTime: end,
      });
      if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
    }
  } finally {
    await wh.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  let command: DemoRecordsCommand;
  try {
    command = parseDemoRecordsArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`demo-records: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (command.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  await writeRecords(command.flags);
}

// Run only as the entry point (npm run demo-records), not when a test imports the parser.
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) await main();
