// getTransaction after migration 110 (issue 37), engine only: the signature-ordered record
// table kept (tx_by_signature_v3, what the service reads) against a signature → rid index
// and the records by id (tx_by_rid), on the same store, interleaved rounds, 1 and 20 keys.
//   npx tsx bench/rid-point-reads.ts --dir bench/tmp/rid10m [--rounds 21]
//   ../shared/tools/memcap 1300M -- npx tsx bench/rid-point-reads.ts --dir bench/tmp/rid10m
// The index is built here (tx_rid_by_sig_probe, dropped with --drop): it is a probe, not a
// migration. Its bytes a record are printed, for the storage budget. Ran on stores migrated
// before 110 built tx_rid_by_sig and dropped tx_by_signature_v3 (the comparison that chose
// the index); on a store of the current 110 the kept design has no table to read.
import path from 'node:path';
import { POINT_READ_SETTINGS } from '../api/analytics/records/signature-lookup.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { flag, machine, median } from './bench-support.ts';
import { cityHasher } from '../ingest/city-hash.ts';

const dir = path.resolve(flag('dir', 'bench/tmp/rid10m'));
const rounds = Number(flag('rounds', '21'));
const wh = new EmbeddedWarehouse(dir);
const INDEX = 'tx_rid_by_sig_probe';

const [has] = await wh.query<{ n: string }>(`SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = '${INDEX}'`);
if (has!.n === '0') {
  await wh.exec(`CREATE TABLE ${INDEX} (sig_key UInt64, instruction_index UInt16, rid UInt64,
    INDEX sig_key_bloom sig_key TYPE bloom_filter(0.001) GRANULARITY 1)
    ENGINE = MergeTree ORDER BY (sig_key, instruction_index)
    SETTINGS index_granularity = 128, min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776`);
  await wh.exec(`INSERT INTO ${INDEX} SELECT cityHash64(signature), instruction_index, rid FROM transactions`);
  await wh.exec(`OPTIMIZE TABLE ${INDEX} FINAL`);
}
const [rows] = await wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
const disk = await wh.query<{ table: string; b: string; parts: string }>(
  `SELECT table, sum(bytes_on_disk) AS b, count() AS parts FROM system.parts WHERE active AND database = currentDatabase()
   AND table IN ('tx_by_signature_v3', 'tx_by_rid', '${INDEX}') GROUP BY table`,
);
const perRecord = Object.fromEntries(
  disk.map((d) => [d.table, { bytesPerRecord: Math.round((Number(d.b) / Number(rows!.n)) * 10) / 10, parts: Number(d.parts) }]),
);

const sample = (
  await wh.query<{ s: string }>('SELECT signature AS s FROM transactions WHERE cityHash64(signature) % 1000 = 7 AND instruction_index = 0 LIMIT 20000')
).map((r) => r.s);
const hasher = cityHasher();
const keyOf = (s: string): string => {
  hasher.hash(s);
  return ((BigInt(hasher.high()) << 32n) | BigInt(hasher.low())).toString();
};
let cursor = 0;
const pick = (k: number): string => Array.from({ length: k }, () => keyOf(sample[(cursor++ * 7919) % sample.length]!)).join(', ');

const designs: Record<string, (keys: string) => string> = {
  'kept: tx_by_signature_v3': (keys) => `SELECT record FROM tx_by_signature_v3 WHERE sig_key IN (${keys})`,
  'index: sig → rid → tx_by_rid': (keys) => `SELECT record FROM tx_by_rid WHERE rid IN (SELECT rid FROM ${INDEX} WHERE sig_key IN (${keys}))`,
};
const times: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const k of [1, 20]) {
    for (const [name, sql] of Object.entries(designs)) {
      const statement = sql(pick(k));
      const t = performance.now();
      const got = await wh.query(statement, { settings: POINT_READ_SETTINGS });
      const ms = performance.now() - t;
      if (got.length < k) throw new Error(`${name}: ${got.length} records for ${k} keys`);
      (times[`${name}, ${k} key${k > 1 ? 's' : ''}`] ??= []).push(ms);
    }
  }
}
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      rounds,
      rows: Number(rows!.n),
      perRecord,
      medianMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Number(median(v.slice(1)).toFixed(2))])),
    },
    null,
    2,
  ),
);
if (process.argv.includes('--drop')) await wh.exec(`DROP TABLE ${INDEX}`);
await wh.close();
