// What the embedded engine itself can do on this machine, with none of our code in the
// way: the ceilings the storage and ingest targets are judged against.
//
//   npx tsx bench/engine-ceilings.ts [--rows 2000000]
//
//  1. INSERT ... SELECT into a bare copy of `transactions` (no views), rows generated in
//     SQL: with constant strings, and with random base58 strings as wide as ours (an
//     88-character signature and 6 accounts of 44), which do not compress.
//  2. JSONEachRow rows sent from Node into the bare copy (the ingest pipeline's insert,
//     without validation, de-duplication or views).
//  3. The per-query floor: `SELECT 1`, and a one-column filtered read of a small table.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { MIGRATIONS_DIR, splitStatements } from '../warehouse/migrate.ts';
import { machine, median, timeMs } from './bench-support.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' } } });
const ROWS = Number(values.rows ?? 2_000_000);
if (!Number.isInteger(ROWS) || ROWS < 10_000) throw new Error('--rows must be a whole number of at least 10000');

const dir = mkdtempSync(path.join(tmpdir(), 'txa-ceilings-'));
const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
try {
  for (const st of splitStatements(readFileSync(path.join(MIGRATIONS_DIR, '001_transactions.sql'), 'utf8'))) await wh.exec(st);
  await wh.exec('CREATE TABLE bare AS transactions');

  const COLS =
    '(signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts, accounts_count, success)';
  // 64 random bytes -> an 88-character base58 signature; 32 bytes -> a 44-character address.
  const b58 = (bytes: number, salt: string): string =>
    `base58Encode(${Array.from({ length: bytes / 8 }, (_, i) => `reinterpretAsString(cityHash64(number, ${salt}, ${i}))`).join(' || ')})`;
  const rate = async (sql: string, rows: number): Promise<number> => Math.round(rows / ((await timeMs(() => wh.exec(sql))) / 1000));

  const constant = await rate(
    `INSERT INTO bare ${COLS} SELECT concat('sig', toString(number)), 0, number,
      toDateTime('2025-01-01', 'UTC') + number % 2592000, 'P', 'jupiter_v6', 'route', 5000, 100, ['a'], 1, 1 FROM numbers(${ROWS})`,
    ROWS,
  );
  await wh.exec('TRUNCATE TABLE bare');
  const realistic = await rate(
    `INSERT INTO bare ${COLS} SELECT ${b58(64, '0')}, 0, number,
      toDateTime('2025-01-01', 'UTC') + number % 2592000, 'P', 'jupiter_v6', 'route', 5000, 100,
      arrayMap(i -> ${b58(32, 'i')}, range(6)), 6, 1 FROM numbers(${ROWS})`,
    ROWS,
  );

  // The pipeline's insert: JSON rows from Node, 20,000 per insert.
  const sample = await wh.query<Record<string, unknown>>(`SELECT * FROM bare LIMIT 20000`);
  const jsonTimes: number[] = [];
  for (let i = 0; i < 5; i++) jsonTimes.push(await timeMs(() => wh.insert('bare', sample)));
  const jsonRate = Math.round(sample.length / (median(jsonTimes) / 1000));

  const floor = async (sql: string): Promise<number> => {
    const ts: number[] = [];
    for (let i = 0; i < 31; i++) ts.push(await timeMs(() => wh.query(sql)));
    return Number(median(ts).toFixed(2));
  };
  await wh.exec(`CREATE TABLE small ENGINE = MergeTree ORDER BY k AS SELECT number % 12 AS k, number AS v FROM numbers(8640)`);
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    rows: ROWS,
    insertSelectConstantStringsRowsPerSec: constant,
    insertSelectRealisticRowsPerSec: realistic,
    jsonEachRowFromNodeRowsPerSec: jsonRate,
    select1Ms: await floor('SELECT 1'),
    oneColumnFilteredReadMs: await floor('SELECT sum(v) FROM small WHERE k = 3'),
  };
  console.log(`base table only, no views, ${ROWS.toLocaleString('en-US')} rows generated in SQL:`);
  console.log(`  constant strings:                   ${constant.toLocaleString('en-US')} rows/s`);
  console.log(`  random base58 signature + 6 accounts: ${realistic.toLocaleString('en-US')} rows/s`);
  console.log(`JSONEachRow from Node, 20,000 per insert: ${jsonRate.toLocaleString('en-US')} rows/s`);
  console.log(`per-query floor: SELECT 1 ${report.select1Ms} ms; one-column filtered read ${report.oneColumnFilteredReadMs} ms`);
  console.log(JSON.stringify(report));
} finally {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
}
