// Where the time of the engine's record checks goes (issue 40; single40, then checks40): over one
// staged body of fresh demo records (its lines in a Memory table, as the checks read them), the
// engine's own JSONEachRow parse of the body against the whole checks view, migration 121's and
// the store's (122's cheaper ones), and each part of the checks alone: a SELECT that sums or
// counts it, so nothing is skipped as unused. The parts after the one parse read a table of its
// results (each field's JSON text), so each is that part's own cost. Alternated, at max_threads
// 1 (as the staging reads) and, with --threads 2, also 2. Per record in µs; medians of --rounds.
//
//   npx tsx bench/ingest-checks-profile.ts [--records 100000] [--rounds 3] [--threads 1|2]
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BASE_COLUMNS } from '../warehouse/tables.ts';
import { machine, median, timeMs } from './bench-support.ts';
import { startBenchServices } from './bench-server.ts';
import { benchPipelineOptions, freshBodies } from './ingest-support.ts';
import { SHAPE, shapeTest } from './common-path.ts';
import { SinglePass } from './single-pass.ts';

const { values } = parseArgs({ options: { records: { type: 'string' }, rounds: { type: 'string' }, threads: { type: 'string' } } });
const RECORDS = Number(values.records ?? 100_000);
const ROUNDS = Number(values.rounds ?? 3);
const THREADS = values.threads === '2' ? [1, 2] : [1];
const services = await startBenchServices();
const { wh, registry } = services;
const file = path.join(tmpdir(), `checks-profile-${process.pid}.ndjson`);
writeFileSync(file, await freshBodies(wh, RECORDS)());
await wh.exec(`CREATE TABLE profile_lines (n UInt32, line String) ENGINE = Memory`);
await wh.exec(`INSERT INTO profile_lines SELECT toUInt32(rowNumberInAllBlocks() + 1), line FROM file('${file}', 'LineAsString')`, {
  settings: { max_threads: 1, input_format_parallel_parsing: 0 },
});
// Each field's JSON text, as the view's one parse gives it.
const FIELDS: Record<string, string> = {
  sig: 'signature',
  ii: 'instruction_index',
  ti: 'transaction_index',
  slot: 'slot',
  bt: 'block_time',
  pid: 'program_id',
  pn: 'protocol_name',
  it: 'instruction_type',
  fee: 'fee',
  cu: 'compute_units',
  acc: 'accounts',
  ac: 'accounts_count',
  ok: 'success',
  em: 'error_message',
  lm: 'log_messages',
  rd: 'raw_data',
};
const lookups = Object.entries(FIELDS)
  .map(([r, f]) => `vals[indexOf(keys, '${f}')] AS r_${r}`)
  .join(', ');
const parsed = '(SELECT n, line, kv.1 AS keys, kv.2 AS vals FROM (SELECT n, line, JSONExtractKeysAndValuesRaw(line) AS kv FROM profile_lines))';
await wh.exec(`CREATE TABLE profile_fields ENGINE = Memory AS SELECT n, keys, vals, ${lookups} FROM ${parsed}`);
const opts = [await registry.list(), benchPipelineOptions(services).maxRecordBytes] as const;
const sp = new SinglePass(wh, tmpdir());
const before = await sp.checksOver('profile_lines', ...opts, '121_ingest_in_engine_checks');
const now = await sp.checksOver('profile_lines', ...opts);
const [structure] = await wh.query<{ s: string }>(
  `SELECT arrayStringConcat(groupArray(concat(name, ' ', type)), ', ') AS s FROM (SELECT name, type FROM system.columns
   WHERE database = currentDatabase() AND table = 'ingest_checked' AND name IN {c:Array(String)} ORDER BY position)`,
  { params: { c: [...BASE_COLUMNS] } },
);
const B58 = '[1-9A-HJ-NP-Za-km-z]';
const lit = (xs: string[]): string => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
const ACCOUNTS = `'^\\\\[("${B58}{32,44}"(,"${B58}{32,44}")*)?\\\\]$'`;
const ints121 = `ingest_int_check('instruction_index', r_ii, 0, 8191) != '' OR ingest_int_check('transaction_index', r_ti, 0, 65535) != ''
  OR ingest_int_check('block_time', r_bt, 0, 4294967295) != '' OR ingest_int_check('fee', r_fee, 0, 9007199254740991) != ''
  OR ingest_int_check('compute_units', r_cu, 0, 4294967295) != '' OR ingest_int_check('slot', r_slot, 0, inf) != ''`;
const ints122 = `NOT (ingest_uint_fast(r_ii, 8191) AND ingest_uint_fast(r_ti, 65535) AND ingest_uint_fast(r_bt, 4294967295)
  AND ingest_uint_fast(r_fee, 9007199254740991) AND ingest_uint_fast(r_cu, 4294967295) AND toString(toUInt64OrZero(r_slot)) = r_slot)`;
const whole = (q: string): string => `SELECT count(), sum(length(code)), sum(cityHash64(signature, slot, accounts, raw_data, log_messages)) FROM (${q})`;
const parts: Record<string, string> = {
  "the engine's JSONEachRow parse (the body's file)": `SELECT count(), sum(cityHash64(signature, slot, accounts, raw_data, log_messages)) FROM file('${file}', 'JSONEachRow', '${structure!.s}')`,
  // A sketch of a next step, NOT equivalent to the checks (the typed reader coerces some values
  // and fails a body on others): the typed parse and the common case's tests over its columns.
  "the engine's JSONEachRow parse and the common case's tests (a sketch)": `SELECT count(), sum(cityHash64(signature, slot, accounts, raw_data, log_messages)),
     countIf(match(signature, '^${B58}{64,88}$') AND match(program_id, '^${B58}{32,44}$') AND match(protocol_name, '^[a-z][a-z0-9_]{0,63}$')
       AND transform(program_id, ${lit(opts[0].map((r) => r.programId))}, ${lit(opts[0].map((r) => r.protocolName))}, '') = protocol_name
       AND length(accounts) <= 1024 AND arrayAll(x -> match(x, '^${B58}{32,44}$'), accounts)
       AND lengthUTF8(instruction_type) BETWEEN 1 AND 128 AND slot <= 17179869182 AND instruction_index <= 8191)
     FROM file('${file}', 'JSONEachRow', '${structure!.s}')`,
  // The pieces of an exact common path over the raw line (a sketch): a shape pattern that only a
  // flat record of the known fields, each value of its passing form, matches; its keys counted
  // (a key is the only '":' such a line holds); the typed values in one extraction.
  'a sketch: the shape pattern over the raw line': `SELECT countIf(match(line, ${SHAPE})) FROM profile_lines`,
  // (b2f)'s shape test whole, as its view computes it (bench/common-path.ts): do the parts add up?
  "a sketch: (b2f)'s whole shape test in one expression": `SELECT countIf(${shapeTest(262144)}) FROM profile_lines`,
  'a sketch: keys counted, each known one found': `SELECT countIf(countSubstrings(line, '":') = ${Object.values(FIELDS)
    .map((f) => `(position(line, '"${f}":') > 0)`)
    .join(' + ')}) FROM profile_lines`,
  'a sketch: the typed values in one JSONExtract': `SELECT sum(cityHash64(JSONExtract(line, 'Tuple(${structure!.s})'))) FROM profile_lines`,
  'the whole checks view, 121': whole(before),
  'the whole checks view, 122 (cheaper)': whole(now),
  'read the lines': 'SELECT sum(length(line)) FROM profile_lines',
  'CR and BOM: every line rewritten (121)': `SELECT sum(length(if(startsWith(l0, '\\xEF\\xBB\\xBF'), substring(l0, 4), l0))) FROM (SELECT if(endsWith(line, '\\r'), substring(line, 1, length(line) - 1), line) AS l0 FROM profile_lines)`,
  'CR and BOM: only a line that has one (122)': `SELECT sum(length(if(endsWith(line, '\\r') OR startsWith(line, '\\xEF\\xBB\\xBF'), ingest_line_text(line), line))) FROM profile_lines`,
  'blank (pattern)': `SELECT countIf(match(line, '^[ \\t\\v\\f\\r]*$')) FROM profile_lines`,
  isValidUTF8: 'SELECT countIf(isValidUTF8(line)) FROM profile_lines',
  'surrogate escapes (position)': `SELECT countIf(position(line, '\\\\ud') > 0 OR position(line, '\\\\uD') > 0) FROM profile_lines`,
  isValidJSON: 'SELECT countIf(isValidJSON(line)) FROM profile_lines',
  'the one parse (JSONExtractKeysAndValuesRaw)': 'SELECT sum(length(JSONExtractKeysAndValuesRaw(line))) FROM profile_lines',
  'JSONExtractKeys alone (for scale)': 'SELECT sum(length(JSONExtractKeys(line))) FROM profile_lines',
  'the one parse and the 16 fields looked up': `SELECT sum(${Object.keys(FIELDS)
    .map((r) => `length(r_${r})`)
    .join(' + ')}) FROM (SELECT ${lookups} FROM ${parsed})`,
  'duplicate keys: arrayDistinct (121)': 'SELECT countIf(length(keys) != length(arrayDistinct(keys))) FROM profile_fields',
  'duplicate keys: arrayUniq (122)': 'SELECT countIf(arrayUniq(keys) != length(keys)) FROM profile_fields',
  'missing required fields (9 has)': `SELECT countIf(${['signature', 'slot', 'block_time', 'program_id', 'protocol_name', 'instruction_type', 'fee', 'compute_units', 'success'].map((f) => `NOT has(keys, '${f}')`).join(' OR ')}) FROM profile_fields`,
  'signature pattern': `SELECT countIf(NOT match(r_sig, '^"${B58}{64,88}"$')) FROM profile_fields`,
  'program_id and protocol_name patterns': `SELECT countIf(NOT match(r_pid, '^"${B58}{32,44}"$') OR NOT match(r_pn, '^"[a-z][a-z0-9_]{0,63}"$')) FROM profile_fields`,
  'six integer checks: ingest_int_check (121)': `SELECT countIf(${ints121}) FROM profile_fields`,
  'six integer checks: ingest_uint_fast (122)': `SELECT countIf(${ints122}) FROM profile_fields`,
  'accounts: items parsed (121)': 'SELECT sum(length(JSONExtractArrayRaw(r_acc))) FROM profile_fields',
  'accounts: items parsed, each matched (121)': `SELECT sum(arrayFirstIndex(x -> NOT match(x, '^"${B58}{32,44}"$'), JSONExtractArrayRaw(r_acc))) FROM profile_fields`,
  'accounts: items parsed and unquoted (121)':
    'SELECT sum(length(arrayMap(x -> substring(x, 2, length(x) - 2), JSONExtractArrayRaw(r_acc)))) FROM profile_fields',
  'accounts: one pattern over the array (122)': `SELECT countIf(NOT match(r_acc, ${ACCOUNTS})) FROM profile_fields`,
  'accounts: one pattern, then split (122)': `SELECT sum(length(if(match(r_acc, ${ACCOUNTS}), splitByString('","', substring(r_acc, 3, length(r_acc) - 4)), []))) FROM profile_fields`,
  'free text unquoted (error_message, log_messages, raw_data, instruction_type)': `SELECT sum(length(ingest_unquote(r_em)) + length(ingest_unquote(r_rd)) + length(ingest_unquote(r_it)) + length(ingest_unquote(r_lm))) FROM profile_fields`,
};
const times: Record<string, number[]> = {};
/** Each part's answer (its counts: e.g. how many lines a pattern matched). */
const answers: Record<string, string> = {};
const loads: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  loads.push(loadavg()[0]!);
  for (const [name, sql] of Object.entries(parts)) {
    for (const threads of THREADS) {
      let out = '';
      (times[`${name} @${threads}`] ??= []).push(await timeMs(async () => void (out = await wh.queryText(sql, 'TSV', { settings: { max_threads: threads } }))));
      answers[name] = out.trim();
    }
  }
}
process.stderr.write(`${RECORDS.toLocaleString('en-US')} records; load at each round's start ${loads.map((l) => l.toFixed(2)).join(', ')}; ${machine()}\n`);
for (const [k, v] of Object.entries(times))
  process.stderr.write(
    `${k.padEnd(80)} ${median(v).toFixed(0).padStart(6)} ms ${((median(v) * 1000) / RECORDS).toFixed(2).padStart(6)} µs/record  (${v.map((x) => x.toFixed(0)).join(', ')})  [${answers[k.replace(/ @\d$/, '')]!.replaceAll('\t', ' ').slice(0, 40)}]\n`,
  );
rmSync(file, { force: true });
await services.cleanup();
