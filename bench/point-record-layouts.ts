// What a point read of a record costs the engine in each layout of the by-signature table
// (issue 25; migration 090's choice): the records of a seeded store copied into scratch
// tables, one per layout, then batches of random keys timed on each, interleaved, in one
// session (the service's statement settings). Layouts:
//   columns, 1 part       021/080's ten columns, merged to one part
//   columns, 3 parts      the same, as a store that ingests has it: one large part, two small
//   columns + bloom 0.01  3 parts, a Bloom filter of sig_key per granule, false positives 1 %
//   columns + bloom 0.001 the same at 0.1 %
//   record, 1 part        090's layout: the record as one JSON array column
//   record + bloom, 3 p.  090's layout as a store that ingests has it
//
//   npx tsx bench/point-record-layouts.ts --dir /path/to/store [--rounds 3] [--batches 40] [--keep]
//
// The scratch tables (bench_layout_*) are dropped at the end unless --keep. Needs ~6x the
// by-signature table's size free on disk. Figures: bench/RESULTS.md, "A record in one column".
import { POINT_READ_SETTINGS } from '../api/analytics/records/signature-lookup.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { decodedRecords } from '../warehouse/signature-records.ts';
import { flag, machine, median, timeMs, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const ROUNDS = Number(flag('rounds', '3'));
const BATCHES = Number(flag('batches', '40'));
const wh = new EmbeddedWarehouse(dir);

const COLUMNS = `sig_key UInt64, signature String CODEC(ZSTD(1)), instruction_index UInt16, slot UInt64, block_time DateTime('UTC'),
  program_id LowCardinality(String), protocol_name LowCardinality(String), instruction_type LowCardinality(String),
  fee UInt64, compute_units UInt32, accounts_count UInt16, success Bool`;
const COLUMN_SELECT =
  'sig_key, signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success';
const RECORD = 'sig_key UInt64, instruction_index UInt16, record String CODEC(ZSTD(1))';
const RECORD_SELECT = `sig_key, instruction_index, record`;
const bloom = (p: string) => `, INDEX skbf sig_key TYPE bloom_filter(${p}) GRANULARITY 1`;
// As 080 and 090 set them: 128-row granules, 4-8 KiB blocks, compact parts.
const SETTINGS = `index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192,
  min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776`;
const ONE_BLOCK = { max_insert_block_size: 1e9, min_insert_block_size_rows: 1e9, min_insert_block_size_bytes: 0, max_threads: 1 };

interface Layout {
  name: string;
  table: string;
  columns: string;
  source: string;
  select: string;
  parts: 1 | 3;
  read: string;
}
const FROM_RECORDS = decodedRecords(V3_TABLE);
const FROM_V3 = V3_TABLE;
const layouts: Layout[] = [
  {
    name: 'columns, 1 part',
    table: 'bench_layout_cols1',
    columns: COLUMNS,
    source: FROM_RECORDS,
    select: COLUMN_SELECT,
    parts: 1,
    read: `${COLUMN_SELECT.replace('sig_key, ', '')}, toString(sig_key) AS sk`,
  },
  {
    name: 'columns, 3 parts',
    table: 'bench_layout_cols3',
    columns: COLUMNS,
    source: FROM_RECORDS,
    select: COLUMN_SELECT,
    parts: 3,
    read: `${COLUMN_SELECT.replace('sig_key, ', '')}, toString(sig_key) AS sk`,
  },
  {
    name: 'columns + bloom 0.01, 3 parts',
    table: 'bench_layout_cols3b2',
    columns: COLUMNS + bloom('0.01'),
    source: FROM_RECORDS,
    select: COLUMN_SELECT,
    parts: 3,
    read: `${COLUMN_SELECT.replace('sig_key, ', '')}, toString(sig_key) AS sk`,
  },
  {
    name: 'columns + bloom 0.001, 3 parts',
    table: 'bench_layout_cols3b3',
    columns: COLUMNS + bloom('0.001'),
    source: FROM_RECORDS,
    select: COLUMN_SELECT,
    parts: 3,
    read: `${COLUMN_SELECT.replace('sig_key, ', '')}, toString(sig_key) AS sk`,
  },
  {
    name: 'record, 1 part',
    table: 'bench_layout_rec1',
    columns: RECORD,
    source: FROM_V3,
    select: RECORD_SELECT,
    parts: 1,
    read: 'record, toString(sig_key) AS sk',
  },
  {
    name: 'record + bloom 0.001, 3 parts (090)',
    table: 'bench_layout_rec3b3',
    columns: RECORD + bloom('0.001'),
    source: FROM_V3,
    select: RECORD_SELECT,
    parts: 3,
    read: 'record, toString(sig_key) AS sk',
  },
];

try {
  console.log(machine());
  for (const l of layouts) {
    await wh.exec(`DROP TABLE IF EXISTS ${l.table}`);
    await wh.exec(`CREATE TABLE ${l.table} (${l.columns}) ENGINE = MergeTree ORDER BY (sig_key, instruction_index) SETTINGS ${SETTINGS}`);
    const ms = await timeMs(async () => {
      // Three parts as ingest leaves them: one large (97 % of the keys), two small (2 % and 1 %), never merged.
      const slice = (where: string) => wh.exec(`INSERT INTO ${l.table} SELECT ${l.select} FROM ${l.source} WHERE ${where}`, { settings: ONE_BLOCK });
      if (l.parts === 1) {
        await slice('1');
        await wh.exec(`OPTIMIZE TABLE ${l.table} FINAL`);
        return;
      }
      await slice('sig_key % 100 >= 3');
      await wh.exec(`OPTIMIZE TABLE ${l.table} FINAL`);
      await wh.exec(`ALTER TABLE ${l.table} MODIFY SETTING max_bytes_to_merge_at_max_space_in_pool = 1`);
      await slice('sig_key % 100 < 2');
      await slice('sig_key % 100 = 2');
    });
    console.log(`built ${l.name} in ${(ms / 1000).toFixed(1)} s`);
  }
  console.table(
    await wh.query(`SELECT table, count() AS parts, sum(rows) AS records, round(sum(bytes_on_disk) / sum(rows), 1) AS bytes_a_record
    FROM system.parts WHERE active AND database = currentDatabase() AND table LIKE 'bench_layout_%' GROUP BY table ORDER BY table`),
  );
  const sample = (await wh.query<{ k: string }>(`SELECT toString(sig_key) AS k FROM ${V3_TABLE} WHERE intHash64(sig_key) % 97 = 0 LIMIT 20000`)).map(
    (r) => r.k,
  );
  if (sample.length === 0) throw new Error('the store holds no records');
  const pick = (n: number) => Array.from({ length: n }, () => sample[Math.floor(Math.random() * sample.length)]!);
  const results: Record<string, Record<string, number[]>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of [1, 25, 50, 100]) {
      for (const l of layouts) {
        const times: number[] = [];
        for (let b = 0; b < BATCHES; b++) {
          const keys = pick(size);
          times.push(await timeMs(() => wh.query(`SELECT ${l.read} FROM ${l.table} WHERE sig_key IN (${keys.join(',')})`, { settings: POINT_READ_SETTINGS })));
        }
        ((results[l.name] ??= {})[`${size} keys`] ??= []).push(median(times));
      }
    }
  }
  console.log(`ms a batch, median of ${BATCHES} batches, per round (${ROUNDS} rounds, interleaved):`);
  console.table(
    Object.fromEntries(
      Object.entries(results).map(([name, bySize]) => [
        name,
        Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, v.map((x) => x.toFixed(2)).join(' / ')])),
      ]),
    ),
  );
} finally {
  if (!process.argv.includes('--keep')) for (const l of layouts) await wh.exec(`DROP TABLE IF EXISTS ${l.table}`);
  await wh.close();
}
