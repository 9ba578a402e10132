// An address page after migration 110 (issue 37), engine only, on a migrated store: forms
// of the one statement, for the hottest plain address (first page and random cursors) and
// random active addresses (first page), interleaved rounds, medians. The service uses the
// bare `rid IN (…)` form (the probe), measured fastest; the others carry the address
// rows' fields or count along (to tell ids shared by two records, or rows without records,
// in the same statement) and cost ~2x (bench/RESULTS.md, "Time-ordered record id").
//   npx tsx bench/rid-page-reads.ts --dir bench/tmp/rid10m [--rounds 15]
import path from 'node:path';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { flag, machine, median } from './bench-support.ts';

const dir = path.resolve(flag('dir', 'bench/tmp/rid10m'));
const rounds = Number(flag('rounds', '15'));
const wh = new EmbeddedWarehouse(dir);
const HOT = flag('hot', 'So11111111111111111111111111111111111111112');
const KEY = 'address_key = reinterpretAsUInt128(sipHash128({addr:String}))';

const ids = (after: boolean) => `SELECT rid, block_time, program_id, protocol_name, success FROM tx_by_address_v2
  WHERE ${KEY}${after ? ' AND rid > {after:UInt64}' : ''} ORDER BY rid ASC LIMIT 101`;
const designs: Record<string, (after: boolean) => string> = {
  'tried: rows joined to records, with row ordinals': (
    after,
  ) => `SELECT toString(a.rid) AS rid, toString(a.k) AS k, toUInt32(a.block_time) AS bt, a.program_id, a.protocol_name, a.success, r.record AS record
    FROM (SELECT *, rowNumberInAllBlocks() AS k FROM (${ids(after)})) AS a
    LEFT JOIN (SELECT rid, record FROM tx_by_rid WHERE rid IN (SELECT rid FROM (${ids(after)}))) AS r ON r.rid = a.rid ORDER BY a.rid, a.k`,
  'tried: records matched to their rows, rows counted': (after) => `SELECT toString(rid) AS rid, record, (SELECT count() FROM (${ids(after)})) AS refs
    FROM tx_by_rid WHERE rid IN (SELECT rid FROM (${ids(after)}))
      AND (rid, JSONExtractUInt(toValidUTF8(record), 4), JSONExtractString(toValidUTF8(record), 5), JSONExtractString(toValidUTF8(record), 6), JSONExtractBool(toValidUTF8(record), 11))
        IN (SELECT rid, toUInt32(block_time), toString(program_id), toString(protocol_name), success FROM (${ids(after)}))
    ORDER BY rid`,
  'service: rid IN (…)': (after) => `SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (SELECT rid FROM (${ids(after)})) ORDER BY rid`,
};
const [count] = await wh.query<{ n: string }>(`SELECT count() AS n FROM tx_by_address_v2 WHERE ${KEY}`, { params: { addr: HOT } });
const cursors = (
  await wh.query<{ r: string }>(`SELECT toString(rid) AS r FROM tx_by_address_v2 WHERE ${KEY} ORDER BY cityHash64(rid) LIMIT 200`, { params: { addr: HOT } })
).map((x) => x.r);
const randoms = (
  await wh.query<{ a: string }>(
    'SELECT DISTINCT arrayJoin(accounts) AS a FROM transactions WHERE cityHash64(signature) % 20000 = 3 AND a != {hot:String} LIMIT 200',
    { params: { hot: HOT } },
  )
).map((x) => x.a);
const times: Record<string, number[]> = {};
let i = 0;
for (let r = 0; r < rounds; r++) {
  for (const [scenario, addr, after] of [
    ['hottest, first page', HOT, undefined],
    ['hottest, random cursor', HOT, cursors[i % cursors.length]],
    ['random address, first page', randoms[i % randoms.length]!, undefined],
  ] as const) {
    for (const [name, sql] of Object.entries(designs)) {
      const t = performance.now();
      await wh.query(sql(after !== undefined), {
        params: { addr, ...(after === undefined ? {} : { after }) },
        settings: { max_threads: 1, join_use_nulls: 0 },
      });
      (times[`${scenario} — ${name}`] ??= []).push(performance.now() - t);
    }
  }
  i += 1;
}
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      rounds,
      hottest: { address: HOT, rows: Number(count!.n) },
      medianMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Number(median(v.slice(1)).toFixed(2))])),
    },
    null,
    2,
  ),
);
await wh.close();
