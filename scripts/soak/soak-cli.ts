// `npm run soak -- [--minutes 10] [--rate 40] [--produce-rate 2000]`: the soak of
// scripts/soak/soak.ts, printing a line per window and a summary against the targets (no
// 5xx; RSS growth under 10 % after warm-up; every produced record stored exactly once).
// Exit code 1 when a target is missed. The JSON report goes to bench/results/soak-<date>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runSoak } from './soak.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '40' },
    'produce-rate': { type: 'string', default: '2000' },
    window: { type: 'string', default: '30' },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const produceRate = Number(values['produce-rate']);
const windowSeconds = Number(values.window);
if (![minutes, rate, produceRate, windowSeconds].every((x) => Number.isFinite(x) && x > 0)) {
  console.error('usage: npm run soak -- [--minutes N] [--rate REQUESTS_PER_S] [--produce-rate RECORDS_PER_S] [--window SECONDS]');
  process.exit(2);
}
console.log(`soak: ${minutes} min, ${rate} requests/s, ${produceRate} records/s through Kafka, windows of ${windowSeconds} s`);
const report = await runSoak({ seconds: minutes * 60, rate, produceRate, windowSeconds });
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/soak-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.json`;
writeFileSync(file, JSON.stringify(report, null, 2));
const growth = report.rssGrowthAfterWarmup;
const checks = [
  [`no 5xx (${report.byOutcome['5xx'] ?? 0})`, (report.byOutcome['5xx'] ?? 0) === 0],
  [`RSS growth after warm-up under 10 % (${growth === null ? '?' : (growth * 100).toFixed(1)} %)`, growth !== null && growth < 0.1],
  [
    `every produced record stored once (produced ${report.produced}, stored ${report.stored}, distinct ${report.storedDistinct})`,
    report.stored === report.produced && report.storedDistinct === report.produced,
  ],
] as const;
console.log(`\nserved ${report.served} requests: ${JSON.stringify(report.byOutcome)}; report in ${file}`);
for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'MISS'} ${what}`);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
