// What the records of one address page cost the engine (issue 25, the hottest address):
// the page's references from tx_by_address, then its ~100 records read each way below,
// interleaved, with the engine's own counters. No HTTP: the engine's share of a page.
//
//   npx tsx bench/address-page-reads.ts --dir /path/to/store [--rounds 30] [--random 20]
//
// Designs (the same references, the same records):
//  - points:    tx_by_signature_v2 by primary key, `sig_key IN (…)`, one thread (060's read)
//  - points2:   the same with two threads
//  - range:     the base table `transactions` (ORDER BY protocol_name, block_time, …): per
//               protocol of the page, its block_time range; rows kept whose hash and
//               instruction_index are the page's (one contiguous granule range per protocol)
//  - range-pw:  range, the key match as an explicit PREWHERE (signature read for every
//               row of the selected granules either way)
// For the hottest plain address (first page and pages at random places of its history)
// and for random addresses (sparse pages: the range read's granule estimate is printed).
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';
import { TX_COLUMNS } from '../api/analytics/transactions.ts';
import { flag, machine, median, timeMs } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const ROUNDS = Number(flag('rounds', '30'));
const RANDOM = Number(flag('random', '20'));
// A copy of the base table with finer granules, to compare (made by hand, e.g. index_granularity 1024).
const FINE = flag('fine-table', '');
const wh = new EmbeddedWarehouse(dir);
const EVENTS = ['SelectedParts', 'SelectedMarks', 'SelectedRows', 'ReadCompressedBytes', 'CompressedReadBufferBlocks', 'OSReadBytes'] as const;

async function events(): Promise<Record<string, number>> {
  const rows = await wh.query<{ event: string; value: string }>('SELECT event, value FROM system.events WHERE event IN {e:Array(String)}', { params: { e: EVENTS } });
  return Object.fromEntries(EVENTS.map((e) => [e, Number(rows.find((r) => r.event === e)?.value ?? 0)]));
}

interface Ref { sk: string; ii: number; bt: number; protocol_name: string }

async function refs(address: string, after: Ref | undefined): Promise<Ref[]> {
  return wh.query<Ref>(
    `SELECT toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE address_key = cityHash64({a:String}) AND address = {a:String}
     ${after ? "AND (block_time, sig_key, instruction_index) > (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_ii:UInt16}) AND block_time >= toDateTime({c_bt:UInt32}, 'UTC')" : ''}
     ORDER BY block_time, sig_key, instruction_index LIMIT 100`,
    { params: { a: address, ...(after ? { c_bt: after.bt, c_sk: after.sk, c_ii: after.ii } : {}) }, settings: { max_threads: 1 } });
}

function pointSql(page: Ref[]): { sql: string; params: Record<string, unknown> } {
  const keys = [...new Set(page.map((r) => r.sk))];
  return {
    sql: `SELECT ${TX_COLUMNS}, toString(sig_key) AS sk FROM ${TABLES.txBySignature} WHERE sig_key IN (${keys.map((_, i) => `{k${i}:UInt64}`).join(', ')})`,
    params: Object.fromEntries(keys.map((k, i) => [`k${i}`, k])),
  };
}

function rangeSql(page: Ref[], prewhere: boolean, table: string = TABLES.transactions): { sql: string; params: Record<string, unknown> } {
  const spans = new Map<string, [number, number]>();
  for (const r of page) {
    const s = spans.get(r.protocol_name);
    spans.set(r.protocol_name, s ? [Math.min(s[0], Number(r.bt)), Math.max(s[1], Number(r.bt))] : [Number(r.bt), Number(r.bt)]);
  }
  const keys = [...new Set(page.map((r) => r.sk))];
  const params: Record<string, unknown> = Object.fromEntries(keys.map((k, i) => [`k${i}`, k]));
  const ors = [...spans].map(([p, [a, b]], i) => {
    Object.assign(params, { [`p${i}`]: p, [`a${i}`]: a, [`b${i}`]: b });
    return `(protocol_name = {p${i}:String} AND block_time BETWEEN toDateTime({a${i}:UInt32}, 'UTC') AND toDateTime({b${i}:UInt32}, 'UTC'))`;
  });
  const key = `cityHash64(signature) IN (${keys.map((_, i) => `{k${i}:UInt64}`).join(', ')})`;
  return {
    sql: `SELECT ${TX_COLUMNS}, toString(cityHash64(signature)) AS sk FROM ${table}
      ${prewhere ? `PREWHERE (${ors.join(' OR ')}) AND ${key}` : `WHERE (${ors.join(' OR ')}) AND ${key}`}`,
    params,
  };
}

async function estimate(sql: string, params: Record<string, unknown>): Promise<{ rows: number; marks: number }> {
  const rows = await wh.query<{ rows: string; marks: string }>(`EXPLAIN ESTIMATE ${sql}`, { params });
  return { rows: rows.reduce((n, r) => n + Number(r.rows), 0), marks: rows.reduce((n, r) => n + Number(r.marks), 0) };
}

type Design = { name: string; run: (page: Ref[]) => Promise<number> };
const designs: Design[] = [
  { name: 'points', run: async (p) => { const q = pointSql(p); return (await wh.query(q.sql, { params: q.params, settings: { max_threads: 1, use_query_condition_cache: 0 } })).length; } },
  { name: 'points2', run: async (p) => { const q = pointSql(p); return (await wh.query(q.sql, { params: q.params, settings: { max_threads: 2, use_query_condition_cache: 0 } })).length; } },
  { name: 'range', run: async (p) => { const q = rangeSql(p, false); return (await wh.query(q.sql, { params: q.params, settings: { max_threads: 1, use_query_condition_cache: 0 } })).length; } },
  ...(FINE ? [{ name: 'range-fine', run: async (p: Ref[]) => { const q = rangeSql(p, false, FINE); return (await wh.query(q.sql, { params: q.params, settings: { max_threads: 1, use_query_condition_cache: 0 } })).length; } }] : []),
  { name: 'range-pw', run: async (p) => { const q = rangeSql(p, true); return (await wh.query(q.sql, { params: q.params, settings: { max_threads: 1, use_query_condition_cache: 0 } })).length; } },
];

async function measure(label: string, pages: Ref[][]): Promise<void> {
  const out: Record<string, string | number>[] = [];
  const times = new Map<string, number[]>(designs.map((d) => [d.name, []]));
  const ev = new Map<string, Record<string, number>>(designs.map((d) => [d.name, Object.fromEntries(EVENTS.map((e) => [e, 0]))]));
  const counts = new Map<string, number>();
  for (let r = 0; r < ROUNDS; r++) {
    const page = pages[r % pages.length]!;
    // Rotate the order each round so no design always runs first (cache warmed by another).
    for (let k = 0; k < designs.length; k++) {
      const d = designs[(k + r) % designs.length]!;
      const before = await events();
      let n = 0;
      times.get(d.name)!.push(await timeMs(async () => { n = await d.run(page); }));
      const after = await events();
      for (const e of EVENTS) ev.get(d.name)![e]! += after[e]! - before[e]!;
      counts.set(`${d.name}#${r}`, n);
      if (d.name !== 'points' && counts.has(`points#${r}`) && counts.get(`points#${r}`) !== n) console.log(`${label} round ${r}: ${d.name} ${n} rows, points ${counts.get(`points#${r}`)}`);
    }
  }
  for (const d of designs) {
    const e = ev.get(d.name)!;
    out.push({ design: d.name, 'median ms': Number(median(times.get(d.name)!).toFixed(2)), ...Object.fromEntries(EVENTS.map((k) => [k, Math.round(e[k]! / ROUNDS)])) });
  }
  console.log(`\n${label} (${pages.length} distinct pages, ${ROUNDS} rounds, per page):`);
  console.table(out);
}

try {
  console.log(machine());
  const [hot] = await wh.query<{ a: string; c: string }>(
    `SELECT address AS a, count() AS c FROM ${TABLES.txByAddress} WHERE address NOT IN (SELECT program_id FROM protocols) GROUP BY a ORDER BY c DESC LIMIT 1`);
  console.log(`hottest plain address ${hot!.a}: ${hot!.c} references`);
  const first = await refs(hot!.a, undefined);
  const est = await estimate(rangeSql(first, false).sql, rangeSql(first, false).params);
  console.log(`first page: ${first.length} refs over ${Number(first.at(-1)!.bt) - Number(first[0]!.bt)} s, ${new Set(first.map((r) => r.protocol_name)).size} protocols; range estimate ${est.rows} rows, ${est.marks} marks`);
  const refTimes: number[] = [];
  for (let i = 0; i < 10; i++) refTimes.push(await timeMs(() => refs(hot!.a, undefined)));
  console.log(`references of the first page: median ${median(refTimes).toFixed(2)} ms`);
  await measure('hottest address, first page', [first]);

  // Pages at random places of the hottest address's history.
  const places = await wh.query<Ref>(
    `SELECT toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE address_key = cityHash64({a:String}) AND address = {a:String} AND intHash64(sig_key) % 1000 = 0 LIMIT {n:UInt32}`, { params: { a: hot!.a, n: RANDOM } });
  const hotPages = await Promise.all(places.map((p) => refs(hot!.a, p)));
  await measure('hottest address, random places', hotPages.filter((p) => p.length > 0));

  // Random addresses at random places (sparse pages).
  const rnd = await wh.query<Ref & { a: string }>(
    `SELECT address AS a, toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE intHash64(sig_key) % 2000 = 0 ORDER BY cityHash64(address, sig_key) LIMIT {n:UInt32}`, { params: { n: RANDOM } });
  const rndPages = (await Promise.all(rnd.map((p) => refs(p.a, p)))).filter((p) => p.length > 0);
  for (const p of rndPages.slice(0, 5)) {
    const q = rangeSql(p, false);
    const e = await estimate(q.sql, q.params);
    console.log(`random page: ${p.length} refs over ${Number(p.at(-1)!.bt) - Number(p[0]!.bt)} s; range estimate ${e.rows} rows, ${e.marks} marks`);
  }
  await measure('random addresses, random places', rndPages);
} finally {
  await wh.close();
}
