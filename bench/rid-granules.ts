// Smaller granules for tx_by_rid (an idea the RESULTS section "Time-ordered record id (issue
// 37)" left untried): the service's page statement on random addresses at random places (as
// rpc-load's randomPage) over tx_by_rid (128-row granules) and over a probe copy with
// 32-row granules, otherwise the same settings, interleaved, engine only, medians; and the
// probe's bytes a record. The probe is built here (tx_by_rid_g32) and dropped with --drop.
//   npx tsx bench/rid-granules.ts --dir bench/tmp/rid10m [--pages 300] [--drop]
import path from 'node:path';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { flag, machine, median } from './bench-support.ts';

const dir = path.resolve(flag('dir', 'bench/tmp/rid10m'));
const pages = Number(flag('pages', '300'));
const wh = new EmbeddedWarehouse(dir);
const PROBE = 'tx_by_rid_g32';
const KEY = 'address_key = reinterpretAsUInt128(sipHash128({addr:String}))';

console.log(machine());
const [has] = await wh.query<{ n: string }>(`SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = '${PROBE}'`);
if (has!.n === '0') {
  const t = performance.now();
  await wh.exec(`CREATE TABLE ${PROBE} (rid UInt64, record String CODEC(ZSTD(1))) ENGINE = MergeTree ORDER BY rid
    SETTINGS index_granularity = 32, min_compress_block_size = 4096, max_compress_block_size = 8192,
    min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776, merge_selector_base = 2`);
  await wh.exec(`INSERT INTO ${PROBE} SELECT rid, record FROM tx_by_rid`);
  await wh.exec(`OPTIMIZE TABLE ${PROBE} FINAL`);
  console.log(`probe built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
const [rows] = await wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
const disk = await wh.query<{ table: string; b: string; parts: string }>(
  `SELECT table, sum(bytes_on_disk) AS b, count() AS parts FROM system.parts WHERE active AND database = currentDatabase()
   AND table IN ('tx_by_rid', '${PROBE}') GROUP BY table`,
);
const perRecord = Object.fromEntries(
  disk.map((d) => [d.table, { bytesPerRecord: Math.round((Number(d.b) / Number(rows!.n)) * 10) / 10, parts: Number(d.parts) }]),
);

const places = await wh.query<{ a: string; id: string }>(
  `SELECT arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS a, toString(rid) AS id FROM transactions
   WHERE intHash64(rid) % 2000 = 0 ORDER BY cityHash64(a, rid) LIMIT 2000`,
);
const times: Record<string, number[]> = {};
for (let i = 0; i < pages; i++) {
  const p = places[(i * 7919) % places.length]!;
  const after = i % 2 === 0;
  const ids = `SELECT rid FROM tx_by_address_v2 WHERE ${KEY}${after ? ' AND rid > {after:UInt64}' : ''} ORDER BY rid ASC LIMIT 101`;
  // Alternate which table goes first, so neither always finds the other's address rows cached.
  for (const table of i % 4 < 2 ? ['tx_by_rid', PROBE] : [PROBE, 'tx_by_rid']) {
    const t = performance.now();
    await wh.query(`SELECT toString(rid) AS id, record FROM ${table} WHERE rid IN (${ids}) ORDER BY rid`, {
      params: { addr: p.a, ...(after ? { after: p.id } : {}) },
      settings: { max_threads: 1 },
    });
    (times[table] ??= []).push(performance.now() - t);
  }
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      pages,
      perRecord,
      ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, { median: Math.round(median(v) * 10) / 10, mean: Math.round(mean(v) * 10) / 10 }])),
    },
    null,
    2,
  ),
);
if (process.argv.includes('--drop')) await wh.exec(`DROP TABLE ${PROBE}`);
await wh.close();
