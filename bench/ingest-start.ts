// A process start on a given store until its first accepted record (issue 40: "start to first
// accepted record < 10 s on the 100M store"): run as its own process, so the figure includes
// Node's and tsx's start, opening the embedded engine over the store's parts, the migrations'
// check, the services' start and the pipeline's first write. Nothing of the store is read
// whole (de-duplication asks the engine per batch), so the figure should not grow with the
// store; the store's row count and the process's memory go with it.
//
//   DATA_DIR=bench/tmp/s100m npx tsx bench/ingest-start.ts
import { loadavg } from 'node:os';
import { createServices } from '../api/server/services.ts';
import { loadConfig } from '../core/config/load-config.ts';
import { createLogger } from '../core/logger.ts';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { ndjsonRecords } from '../ingest/ndjson.ts';

const report = (line: string): void => void process.stderr.write(`${line}\n`);
const at = (): number => performance.now();

const imported = at();
const config = loadConfig({ ...process.env, DEMO_ROWS: '0', LOG_LEVEL: 'warn' });
const services = await createServices(config, createLogger('warn'));
const started = at();
const now = Math.floor(Date.now() / 1000);
// A record no store holds: a seed of its own, stamped now (the live shape).
const records = ndjsonRecords(
  await demoRecordsNdjson(services.wh, { seed: Date.now() % 1_000_000, total: 1, offset: 0, count: 1, startTime: now - 60, endTime: now }),
);
const report1 = await services.pipeline.ingest(records, 'bench-start');
const accepted = at();
if (report1.accepted !== 1) throw new Error(`first record not accepted: ${JSON.stringify(report1)}`);
const [rows] = await services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
report(
  `store ${config.dataDir}: ${Number(rows?.n ?? 0).toLocaleString('en-US')} records; ms from process start: modules loaded ${imported.toFixed(0)}, ` +
    `services started ${started.toFixed(0)}, first record accepted ${accepted.toFixed(0)} (its write ${(accepted - started).toFixed(0)} ms); ` +
    `rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB; load ${loadavg()[0]!.toFixed(1)}`,
);
await services.close();
