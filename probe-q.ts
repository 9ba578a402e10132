import { EmbeddedWarehouse } from './warehouse/embedded-warehouse.ts';
const wh = new EmbeddedWarehouse('/tmp/ing40/store10m');
const [mx] = await wh.query<{ t: number }>(`SELECT toUInt32(max(block_time)) AS t FROM ingest_keys`);
console.log('max', mx, await wh.query(`SELECT count() n, uniqExact(partition) p FROM system.parts WHERE table='ingest_keys' AND active`));
const N = 10000; const t: number[] = [], h: number[] = [], l: number[] = [];
for (let i = 0; i < N; i++) { t.push(mx!.t - Math.floor(Math.random() * 86400)); h.push((Math.random() * 2 ** 32) >>> 0); l.push((Math.random() * 2 ** 32) >>> 0); }
const qs: Record<string, string> = {
  tupleIn: `SELECT count() FROM ingest_keys WHERE (block_time, sig_key) IN (SELECT arrayJoin(arrayZip(arrayMap(x -> toDateTime(x, 'UTC'), {t:Array(UInt32)}), arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), {h:Array(UInt32)}, {l:Array(UInt32)}))))`,
  rangeKeyIn: `SELECT count() FROM ingest_keys WHERE block_time BETWEEN toDateTime(arrayMin({t:Array(UInt32)}), 'UTC') AND toDateTime(arrayMax({t:Array(UInt32)}), 'UTC') AND sig_key IN (SELECT arrayJoin(arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), {h:Array(UInt32)}, {l:Array(UInt32)})))`,
  rangePrewhere: `SELECT count() FROM ingest_keys PREWHERE sig_key IN (SELECT arrayJoin(arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), {h:Array(UInt32)}, {l:Array(UInt32)}))) WHERE block_time BETWEEN toDateTime(arrayMin({t:Array(UInt32)}), 'UTC') AND toDateTime(arrayMax({t:Array(UInt32)}), 'UTC')`,
  bareSet: `SELECT count() FROM (SELECT arrayJoin(arrayZip(arrayMap(x -> toDateTime(x, 'UTC'), {t:Array(UInt32)}), arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), {h:Array(UInt32)}, {l:Array(UInt32)}))))`,
};
const lit = h.map((x, i) => ((BigInt(x) << 32n) | BigInt(l[i]!)).toString()).join(',');
qs.literalPrewhere = `SELECT count() FROM ingest_keys PREWHERE sig_key IN (${lit}) WHERE block_time BETWEEN toDateTime(${Math.min(...t)}, 'UTC') AND toDateTime(${Math.max(...t)}, 'UTC')`;
const narrow = t.map(() => mx!.t - Math.floor(Math.random() * 5));
qs.liveTuple = qs.tupleIn!.replace('{t:Array(UInt32)}', `[${narrow.join(',')}]`);
qs.livePrewhere = `SELECT count() FROM ingest_keys PREWHERE sig_key IN (${lit}) WHERE block_time BETWEEN toDateTime(${Math.min(...narrow)}, 'UTC') AND toDateTime(${Math.max(...narrow)}, 'UTC')`;
for (let round = 0; round < 2; round++) for (const [name, q] of Object.entries(qs)) {
  let st: unknown; const t0 = performance.now();
  await wh.query(q, { params: { t, h, l }, onStats: (s) => (st = s) });
  console.log(name, Math.round(performance.now() - t0), 'ms', st);
}
await wh.close();
