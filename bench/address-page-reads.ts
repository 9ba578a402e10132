// What the records of one address page cost the engine (issue 25, the hottest address):
// the page's references from tx_by_address, then its ~100 records read each way below,
// interleaved, with the engine's own counters. No HTTP: the engine's share of a page.
//
//   npx tsx bench/address-page-reads.ts --dir /path/to/store [--rounds 30] [--random 20]
//
// Designs (the same references, the same records), interleaved, each read the same way:
//  - points:        the service's read (signature-lookup.ts since migration 090): the record
//                   column of tx_by_signature_v3 by primary key, the keys as a literal list,
//                   its settings (one thread, merge_tree_coarse_index_granularity 2, ...)
//  - points-params: the same column, `sig_key IN ({k0:UInt64}, …)`, one bound parameter per
//                   key, one thread and otherwise default settings (060's form of the read)
//  - points2:       points with two threads
//  - points-fields: points with the fields decoded by the engine (TX_COLUMNS through
//                   SIGNATURE_RECORDS, as SQL that filters on them reads them) instead of the
//                   record column (which the service unpacks in JS, not timed here). 021's layout had `points-few` here (points without
//                   the columns a reference already has); with the record in one column a read
//                   cannot skip fields, so that design is gone.
//  - range:         the base table `transactions` (ORDER BY protocol_name, block_time, …):
//                   `protocol_name IN (the page's) AND block_time BETWEEN (its first and last)`
//                   and the page's keys; one granule range per protocol instead of ~100 granules
//  - range-each:    range with each protocol's own time span (an OR of ranges)
//  - range-fine:    range on a copy of the base table with finer granules (--fine-table NAME;
//                   --build-fine G makes tx_fine_G with index_granularity G first, ~1 min at
//                   10M; it stays in the store: drop it before timing anything else there)
// For the hottest plain address (first page and pages at random places of its history)
// and for random addresses (sparse pages). Also: the references' own read, and whether
// max_rows_to_read refuses a range read before reading (against the primary-key estimate).
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';
import { TX_COLUMNS } from '../api/analytics/records/transactions.ts';
import { decodedRecords } from '../warehouse/signature-records.ts';
import { flag, keyList, machine, median, POINT_READ_SETTINGS, pointReadSql, requireCurrentSchema, timeMs, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const ROUNDS = Number(flag('rounds', '30'));
const RANDOM = Number(flag('random', '20'));
const BUILD = flag('build-fine', '');
const FINE = BUILD === '' ? flag('fine-table', '') : `tx_fine_${Number(BUILD)}`;
const wh = new EmbeddedWarehouse(dir);
const EVENTS = ['SelectedParts', 'SelectedMarks', 'SelectedRows', 'ReadCompressedBytes', 'CompressedReadBufferBlocks', 'OSReadBytes'] as const;

async function events(): Promise<Record<string, number>> {
  const rows = await wh.query<{ event: string; value: string }>('SELECT event, value FROM system.events WHERE event IN {e:Array(String)}', {
    params: { e: EVENTS },
  });
  return Object.fromEntries(EVENTS.map((e) => [e, Number(rows.find((r) => r.event === e)?.value ?? 0)]));
}

interface Ref {
  sk: string;
  ii: number;
  bt: number;
  protocol_name: string;
}

async function refs(address: string, after: Ref | undefined): Promise<Ref[]> {
  return wh.query<Ref>(
    `SELECT toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE address_key = cityHash64({a:String}) AND address = {a:String}
     ${after ? "AND (block_time, sig_key, instruction_index) > (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_ii:UInt16}) AND block_time >= toDateTime({c_bt:UInt32}, 'UTC')" : ''}
     ORDER BY block_time, sig_key, instruction_index LIMIT 100`,
    { params: { a: address, ...(after ? { c_bt: after.bt, c_sk: after.sk, c_ii: after.ii } : {}) }, settings: { max_threads: 1 } },
  );
}

const pageKeys = (page: Ref[]): string[] => [...new Set(page.map((r) => r.sk))];

/** The service's statement, or the fields decoded in the engine for the same keys. */
function pointSql(page: Ref[], fields = false): { sql: string; params: Record<string, unknown> } {
  return {
    sql: fields
      ? `SELECT ${TX_COLUMNS}, toString(sig_key) AS sk FROM ${decodedRecords(V3_TABLE)} WHERE sig_key IN (${keyList(pageKeys(page))})`
      : pointReadSql(pageKeys(page)),
    params: {},
  };
}

function pointParamsSql(page: Ref[]): { sql: string; params: Record<string, unknown> } {
  const keys = pageKeys(page);
  return {
    sql: `SELECT record, toString(sig_key) AS sk FROM ${V3_TABLE} WHERE sig_key IN (${keys.map((_, i) => `{k${i}:UInt64}`).join(', ')})`,
    params: Object.fromEntries(keys.map((k, i) => [`k${i}`, k])),
  };
}

function rangeSql(page: Ref[], each: boolean, table: string = TABLES.transactions): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { keys: [...new Set(page.map((r) => r.sk))].map((k) => BigInt(k)) };
  let where: string;
  if (each) {
    const spans = new Map<string, [number, number]>();
    for (const r of page) {
      const s = spans.get(r.protocol_name);
      spans.set(r.protocol_name, s ? [Math.min(s[0], Number(r.bt)), Math.max(s[1], Number(r.bt))] : [Number(r.bt), Number(r.bt)]);
    }
    where = `(${[...spans]
      .map(([p, [a, b]], i) => {
        Object.assign(params, { [`p${i}`]: p, [`a${i}`]: a, [`b${i}`]: b });
        return `(protocol_name = {p${i}:String} AND block_time BETWEEN toDateTime({a${i}:UInt32}, 'UTC') AND toDateTime({b${i}:UInt32}, 'UTC'))`;
      })
      .join(' OR ')})`;
  } else {
    Object.assign(params, {
      ps: [...new Set(page.map((r) => r.protocol_name))],
      lo: Math.min(...page.map((r) => Number(r.bt))),
      hi: Math.max(...page.map((r) => Number(r.bt))),
    });
    where = "protocol_name IN {ps:Array(String)} AND block_time BETWEEN toDateTime({lo:UInt32}, 'UTC') AND toDateTime({hi:UInt32}, 'UTC')";
  }
  return {
    sql: `SELECT ${TX_COLUMNS}, toString(cityHash64(signature)) AS sk FROM ${table} WHERE ${where} AND cityHash64(signature) IN {keys:Array(UInt64)}`,
    params,
  };
}

async function estimate(sql: string, params: Record<string, unknown>): Promise<{ rows: number; marks: number }> {
  const rows = await wh.query<{ rows: string; marks: string }>(`EXPLAIN ESTIMATE ${sql}`, { params });
  return { rows: rows.reduce((n, r) => n + Number(r.rows), 0), marks: rows.reduce((n, r) => n + Number(r.marks), 0) };
}

const ONE = { max_threads: 1, use_query_condition_cache: 0 };
const read = async (q: { sql: string; params: Record<string, unknown> }, settings: Record<string, string | number | boolean> = ONE): Promise<number> =>
  (await wh.query(q.sql, { params: q.params, settings })).length;
type Design = { name: string; run: (page: Ref[]) => Promise<number> };
const designs: Design[] = [
  { name: 'points-params', run: (p) => read(pointParamsSql(p)) },
  { name: 'points', run: (p) => read(pointSql(p), POINT_READ_SETTINGS) },
  { name: 'points2', run: (p) => read(pointSql(p), { ...POINT_READ_SETTINGS, max_threads: 2 }) },
  { name: 'points-fields', run: (p) => read(pointSql(p, true), POINT_READ_SETTINGS) },
  { name: 'range', run: (p) => read(rangeSql(p, false)) },
  { name: 'range-each', run: (p) => read(rangeSql(p, true)) },
  ...(FINE ? [{ name: 'range-fine', run: (p: Ref[]) => read(rangeSql(p, false, FINE)) }] : []),
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
      times.get(d.name)!.push(
        await timeMs(async () => {
          n = await d.run(page);
        }),
      );
      const after = await events();
      for (const e of EVENTS) ev.get(d.name)![e]! += after[e]! - before[e]!;
      counts.set(`${d.name}#${r}`, n);
      if (d.name !== 'points' && counts.has(`points#${r}`) && counts.get(`points#${r}`) !== n)
        console.log(`${label} round ${r}: ${d.name} ${n} rows, points ${counts.get(`points#${r}`)}`);
    }
  }
  for (const d of designs) {
    const e = ev.get(d.name)!;
    out.push({
      design: d.name,
      'median ms': Number(median(times.get(d.name)!).toFixed(2)),
      ...Object.fromEntries(EVENTS.map((k) => [k, Math.round(e[k]! / ROUNDS)])),
    });
  }
  console.log(`\n${label} (${pages.length} distinct pages, ${ROUNDS} rounds, per page):`);
  console.table(out);
}

try {
  console.log(machine());
  await requireCurrentSchema(wh, dir);
  if (BUILD !== '') {
    // A copy of the base table with finer granules (same key, same rows), merged to one part.
    const t0 = Date.now();
    await wh.exec(`DROP TABLE IF EXISTS ${FINE}`);
    await wh.exec(
      `CREATE TABLE ${FINE} AS ${TABLES.transactions} ENGINE = MergeTree PARTITION BY toYYYYMM(block_time)
      ORDER BY (protocol_name, block_time, signature, instruction_index) SETTINGS index_granularity = {g:UInt32}`,
      { params: { g: Number(BUILD) } },
    );
    await wh.exec(`INSERT INTO ${FINE} SELECT * FROM ${TABLES.transactions}`);
    await wh.exec(`OPTIMIZE TABLE ${FINE} FINAL`);
    console.log(`built ${FINE} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (FINE !== '') {
    console.table(
      await wh.query(
        `SELECT table, count() AS parts, sum(marks) AS marks, round(sum(bytes_on_disk) / sum(rows), 1) AS bytes_a_record
      FROM system.parts WHERE active AND database = currentDatabase() AND table IN {t:Array(String)} GROUP BY table`,
        { params: { t: [TABLES.transactions, FINE] } },
      ),
    );
  }
  const [hot] = await wh.query<{ a: string; c: string }>(
    `SELECT address AS a, count() AS c FROM ${TABLES.txByAddress} WHERE address NOT IN (SELECT program_id FROM protocols) GROUP BY a ORDER BY c DESC LIMIT 1`,
  );
  console.log(`hottest plain address ${hot!.a}: ${hot!.c} references`);
  const first = await refs(hot!.a, undefined);
  const est = await estimate(rangeSql(first, false).sql, rangeSql(first, false).params);
  console.log(
    `first page: ${first.length} refs over ${Number(first.at(-1)!.bt) - Number(first[0]!.bt)} s, ${new Set(first.map((r) => r.protocol_name)).size} protocols; range estimate ${est.rows} rows, ${est.marks} marks`,
  );
  const refTimes: number[] = [];
  for (let i = 0; i < 10; i++) refTimes.push(await timeMs(() => refs(hot!.a, undefined)));
  console.log(`references of the first page: median ${median(refTimes).toFixed(2)} ms`);
  await measure('hottest address, first page', [first]);
  // Does max_rows_to_read refuse before reading? A bound below the estimate, then above it.
  for (const bound of [Math.floor(est.rows / 2), est.rows * 2]) {
    const before = await events();
    let outcome = 'read';
    try {
      await read(rangeSql(first, false), { ...ONE, max_rows_to_read: bound, read_overflow_mode: 'throw' });
    } catch (err) {
      outcome = `refused: ${String((err as Error).message).slice(0, 110)}`;
    }
    const after = await events();
    console.log(
      `range read with max_rows_to_read ${bound}: ${outcome}; marks read ${after.SelectedMarks! - before.SelectedMarks!}, compressed bytes read ${after.ReadCompressedBytes! - before.ReadCompressedBytes!}`,
    );
  }

  // Pages at random places of the hottest address's history.
  const places = await wh.query<Ref>(
    `SELECT toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE address_key = cityHash64({a:String}) AND address = {a:String} AND intHash64(sig_key) % 1000 = 0 LIMIT {n:UInt32}`,
    { params: { a: hot!.a, n: RANDOM } },
  );
  const hotPages = await Promise.all(places.map((p) => refs(hot!.a, p)));
  await measure(
    'hottest address, random places',
    hotPages.filter((p) => p.length > 0),
  );

  // Random addresses at random places (sparse pages).
  const rnd = await wh.query<Ref & { a: string }>(
    `SELECT address AS a, toString(sig_key) AS sk, instruction_index AS ii, toUInt32(block_time) AS bt, protocol_name FROM ${TABLES.txByAddress}
     WHERE intHash64(sig_key) % 2000 = 0 ORDER BY cityHash64(address, sig_key) LIMIT {n:UInt32}`,
    { params: { n: RANDOM } },
  );
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
