// Where the time of migration 121's checks goes (issue 40, single40): over one staged body of
// fresh demo records, the engine's own JSONEachRow parse of it against the whole checks view and
// a few of its parts, each a SELECT that reads the staged file, alternated, at max_threads 1 (as
// the staging reads) and 2. Times in ms; the medians of --rounds.
//
//   npx tsx bench/ingest-checks-profile.ts [--records 40000] [--rounds 3]
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BASE_COLUMNS } from '../warehouse/tables.ts';
import { machine, median, timeMs } from './bench-support.ts';
import { startBenchServices } from './bench-server.ts';
import { benchPipelineOptions, freshBodies } from './ingest-support.ts';
import { SinglePass } from './single-pass.ts';

const { values } = parseArgs({ options: { records: { type: 'string' }, rounds: { type: 'string' } } });
const RECORDS = Number(values.records ?? 40_000);
const ROUNDS = Number(values.rounds ?? 3);
const services = await startBenchServices();
const { wh, registry } = services;
const file = path.join(tmpdir(), `checks-profile-${process.pid}.ndjson`);
writeFileSync(file, await freshBodies(wh, RECORDS)());
const lines = `file('${file}', 'LineAsString')`;
const checks = await new SinglePass(wh, tmpdir()).checksOver(
  `(SELECT toUInt32(_row_number + 1) AS n, line FROM ${lines})`,
  await registry.list(),
  benchPipelineOptions(services).maxRecordBytes,
);
const [structure] = await wh.query<{ s: string }>(
  `SELECT arrayStringConcat(groupArray(concat(name, ' ', type)), ', ') AS s FROM (SELECT name, type FROM system.columns
   WHERE database = currentDatabase() AND table = 'ingest_checked' AND name IN {c:Array(String)} ORDER BY position)`,
  { params: { c: [...BASE_COLUMNS] } },
);
// Each part sums something of its result, so nothing is skipped as unused.
const parts: Record<string, string> = {
  'read the lines': `SELECT sum(length(line)) FROM ${lines}`,
  "the engine's JSONEachRow parse": `SELECT count(), sum(cityHash64(signature, slot, accounts, raw_data, log_messages)) FROM file('${file}', 'JSONEachRow', '${structure!.s}')`,
  isValidJSON: `SELECT countIf(isValidJSON(line)) FROM ${lines}`,
  'JSONExtractKeysAndValuesRaw (the one parse)': `SELECT sum(length(JSONExtractKeysAndValuesRaw(line))) FROM ${lines}`,
  'accounts: items and their Base58 pattern': `SELECT sum(arrayFirstIndex(x -> NOT match(x, '^"[1-9A-HJ-NP-Za-km-z]{32,44}"$'), JSONExtractArrayRaw(JSONExtractRaw(line, 'accounts')))) FROM ${lines}`,
  'the whole checks view': `SELECT count(), sum(length(code)), sum(cityHash64(signature, slot, accounts, raw_data, log_messages)) FROM (${checks})`,
};
const times: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, sql] of Object.entries(parts)) {
    for (const threads of [1, 2]) {
      (times[`${name} @${threads}`] ??= []).push(await timeMs(() => wh.queryText(sql, 'TSV', { settings: { max_threads: threads } })));
    }
  }
}
process.stderr.write(`${RECORDS.toLocaleString('en-US')} records; ${machine()}\n`);
for (const [k, v] of Object.entries(times))
  process.stderr.write(`${k.padEnd(56)} ${median(v).toFixed(0).padStart(6)} ms  (${v.map((x) => x.toFixed(0)).join(', ')})\n`);
rmSync(file, { force: true });
await services.cleanup();
