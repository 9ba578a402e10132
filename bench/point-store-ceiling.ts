// The engine's own ceiling for the point reads of issue 25, in one run on one seeded store:
// the same random keys read from each candidate layout of the by-signature store, and the
// reference reads of random address pages, without HTTP, JSON or the service around them.
//
//   npx tsx bench/point-store-ceiling.ts --dir /path/to/store [--batches 20] [--build] [--drop]
//   /work/shared/tools/memcap 1300M -- npx tsx bench/point-store-ceiling.ts --dir ...
//
// Needs a store at migration 090. --build makes the candidates once (kept in the store,
// dropped with --drop), each filled from tx_by_signature_v3 (the older layouts' columns
// decoded through decodedRecords, warehouse/signature-records.ts):
//   ps_mt_one       021's layout (ten columns, wide parts) merged to one part (OPTIMIZE FINAL)
//   ps_compact_one  the same in one compact part (a granule's columns side by side: 080's layout)
//   ps_kv           EmbeddedRocksDB keyed by sig_key, a key's records as arrays
//   ps_v3_one       090's layout (the record in one JSON column, Bloom filter of sig_key) in one part
// and prints build time and bytes on disk of each. Candidates that exist are measured next
// to tx_by_signature_v3 as it stands (its parts as the seed left them). Every read is the
// service's (signature-lookup.ts: keys as a literal list, its settings); the 090 tables
// return the record column as the service reads it, the others their columns.
import { execSync } from 'node:child_process';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { decodedRecords } from '../warehouse/signature-records.ts';
import { TABLES } from '../warehouse/tables.ts';
import { flag, keyList, machine, median, POINT_READ_SETTINGS, pointReadSql, requireCurrentSchema, timeMs, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const BATCHES = Number(flag('batches', '20'));
const wh = new EmbeddedWarehouse(dir);
const COLS = 'signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success';
/** 021's tx_by_signature_v2 (migration 080 changed only its part settings); the candidates add theirs. */
const V2_TABLE = (name: string, settings = '') => `CREATE TABLE ${name} (sig_key UInt64, signature String CODEC(ZSTD(1)), instruction_index UInt16,
  slot UInt64, block_time DateTime('UTC'), program_id LowCardinality(String), protocol_name LowCardinality(String),
  instruction_type LowCardinality(String), fee UInt64, compute_units UInt32, accounts_count UInt16, success Bool)
  ENGINE = MergeTree ORDER BY (sig_key, instruction_index)
  SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192${settings}`;
const exists = async (t: string) =>
  Number(
    (await wh.query<{ n: string }>('SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { params: { t } }))[0]!.n,
  ) > 0;

try {
  console.log(machine());
  await requireCurrentSchema(wh, dir);
  if (process.argv.includes('--drop')) {
    for (const t of ['ps_mt_one', 'ps_compact_one', 'ps_kv', 'ps_v3_one']) await wh.exec(`DROP TABLE IF EXISTS ${t}`);
  }
  if (process.argv.includes('--build')) {
    if (!(await exists('ps_mt_one'))) {
      await wh.exec(V2_TABLE('ps_mt_one'));
      const copy = await timeMs(() => wh.exec(`INSERT INTO ps_mt_one SELECT sig_key, ${COLS} FROM ${decodedRecords(V3_TABLE)}`));
      const opt = await timeMs(() => wh.exec('OPTIMIZE TABLE ps_mt_one FINAL'));
      console.log(`ps_mt_one: copy ${(copy / 1000).toFixed(1)} s, OPTIMIZE FINAL ${(opt / 1000).toFixed(1)} s`);
    }
    if (!(await exists('ps_compact_one'))) {
      // Compact parts keep a granule's columns next to each other in one file: one read
      // from disk per key past memory instead of one per column.
      await wh.exec(V2_TABLE('ps_compact_one', ', min_bytes_for_wide_part = 1000000000000, min_rows_for_wide_part = 1000000000000'));
      const copy = await timeMs(() => wh.exec(`INSERT INTO ps_compact_one SELECT sig_key, ${COLS} FROM ${decodedRecords(V3_TABLE)}`));
      const opt = await timeMs(() => wh.exec('OPTIMIZE TABLE ps_compact_one FINAL'));
      console.log(`ps_compact_one: copy ${(copy / 1000).toFixed(1)} s, OPTIMIZE FINAL ${(opt / 1000).toFixed(1)} s`);
    }
    if (!(await exists('ps_kv'))) {
      await wh.exec(`CREATE TABLE ps_kv (sig_key UInt64, signature Array(String), instruction_index Array(UInt16), slot Array(UInt64),
        block_time Array(DateTime('UTC')), program_id Array(LowCardinality(String)), protocol_name Array(LowCardinality(String)),
        instruction_type Array(LowCardinality(String)), fee Array(UInt64), compute_units Array(UInt32), accounts_count Array(UInt16),
        success Array(Bool)) ENGINE = EmbeddedRocksDB PRIMARY KEY sig_key`);
      const ms = await timeMs(() =>
        wh.exec(`INSERT INTO ps_kv SELECT sig_key, groupArray(signature), groupArray(instruction_index), groupArray(slot),
        groupArray(block_time), groupArray(program_id), groupArray(protocol_name), groupArray(instruction_type), groupArray(fee),
        groupArray(compute_units), groupArray(accounts_count), groupArray(success) FROM ${decodedRecords(V3_TABLE)} GROUP BY sig_key`),
      );
      console.log(`ps_kv: build ${(ms / 1000).toFixed(1)} s`);
    }
    if (!(await exists('ps_v3_one'))) {
      await wh.exec(`CREATE TABLE ps_v3_one AS ${V3_TABLE}`);
      const copy = await timeMs(() => wh.exec(`INSERT INTO ps_v3_one SELECT * FROM ${V3_TABLE}`));
      const opt = await timeMs(() => wh.exec('OPTIMIZE TABLE ps_v3_one FINAL'));
      console.log(`ps_v3_one: copy ${(copy / 1000).toFixed(1)} s, OPTIMIZE FINAL ${(opt / 1000).toFixed(1)} s`);
    }
  }
  await wh.exec('SYSTEM STOP MERGES');
  const [count] = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.transactions}`);
  const records = Number(count!.n);
  console.table(
    await wh.query(
      `SELECT table, count() AS parts, sum(rows) AS rows, round(sum(bytes_on_disk) / {n:UInt64}, 1) AS bytes_per_record
    FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table`,
      { params: { n: records } },
    ),
  );
  if (await exists('ps_kv')) {
    const [p] = await wh.query<{ p: string }>("SELECT data_paths[1] AS p FROM system.tables WHERE database = currentDatabase() AND name = 'ps_kv'");
    const bytes = Number(execSync(`du -sb ${JSON.stringify(p!.p)}`, { encoding: 'utf8' }).split('\t')[0]);
    console.log(`ps_kv on disk: ${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / records).toFixed(1)} B a record`);
  }

  const sample = (
    await wh.query<{ k: string }>(`SELECT toString(sig_key) AS k FROM ${V3_TABLE} WHERE intHash64(sig_key) % {m:UInt64} = 0 LIMIT {n:UInt32}`, {
      params: { m: Math.max(1, Math.floor(records / 8000)), n: 4000 },
    })
  ).map((r) => r.k);
  // Each reader takes the batch's keys as the service writes them (a literal list).
  const readers: Record<string, (keys: string[]) => string> = { service: (keys) => pointReadSql(keys) };
  const literal = (keys: string[]) => ` WHERE sig_key IN (${keyList(keys)})`;
  if (await exists('ps_mt_one')) readers.ps_mt_one = (keys) => `SELECT ${COLS} FROM ps_mt_one${literal(keys)}`;
  if (await exists('ps_compact_one')) readers.ps_compact_one = (keys) => `SELECT ${COLS} FROM ps_compact_one${literal(keys)}`;
  if (await exists('ps_kv')) readers.ps_kv = (keys) => `SELECT ${COLS} FROM ps_kv ARRAY JOIN ${COLS}${literal(keys)}`;
  if (await exists('ps_v3_one')) readers.ps_v3_one = (keys) => pointReadSql(keys, 'ps_v3_one');
  const rows: Record<string, number | string>[] = [];
  for (const size of [1, 50, 100]) {
    // Interleaved: every batch of keys goes to each candidate in turn, so load swings fall on all.
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((k) => [k, []]));
    const got: Record<string, number> = {};
    for (let b = 0; b < BATCHES; b++) {
      const picks = Array.from({ length: size }, () => sample[Math.floor(Math.random() * sample.length)]!);
      for (const [name, sql] of Object.entries(readers)) {
        let n = 0;
        times[name]!.push(
          await timeMs(async () => {
            n = (await wh.query(sql(picks), { settings: POINT_READ_SETTINGS })).length;
          }),
        );
        got[name] = (got[name] ?? 0) + n;
      }
    }
    for (const name of Object.keys(readers)) {
      rows.push({
        store: name,
        keys: size,
        'ms/batch (median)': Number(median(times[name]!).toFixed(2)),
        'ms/key': Number((median(times[name]!) / size).toFixed(3)),
        'rows read': got[name]!,
      });
    }
  }
  // Address pages: the reference read of a random address at a random place (the page's
  // first read), 101 references, as address-transactions.ts reads them.
  const addrs = await wh.query<{ a: string; n: string }>(`SELECT address AS a, count() AS n FROM ${TABLES.txByAddress}
      WHERE intHash64(address_key) % 64 = 0 GROUP BY address HAVING n > 200 LIMIT 200`);
  const refTimes: number[] = [];
  for (let b = 0; b < Math.min(BATCHES, addrs.length); b++) {
    const a = addrs[Math.floor(Math.random() * addrs.length)]!;
    refTimes.push(
      await timeMs(() =>
        wh.query(
          `SELECT toString(sig_key) AS sk, instruction_index, toUInt32(block_time) AS bt, program_id, protocol_name, success
      FROM ${TABLES.txByAddress} WHERE address_key = cityHash64({a:String}) AND address = {a:String}
      AND block_time <= (SELECT quantileExact(0.5)(block_time) FROM ${TABLES.txByAddress} WHERE address_key = cityHash64({a:String}))
      ORDER BY block_time DESC, sig_key DESC, instruction_index DESC LIMIT 101`,
          { params: { a: a.a }, settings: { max_threads: 1 } },
        ),
      ),
    );
  }
  rows.push({
    store: 'tx_by_address references (random address, middle page, 101 rows; includes a median lookup)',
    keys: 101,
    'ms/batch (median)': Number(median(refTimes).toFixed(2)),
    'ms/key': '',
    'rows read': '',
  });
  console.table(rows);
  console.log(JSON.stringify({ date: new Date().toISOString(), machine: machine(), records, results: rows }));
} finally {
  await wh.close();
}
