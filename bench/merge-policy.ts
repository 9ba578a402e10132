// What a merge policy for the by-signature table costs and buys (issue 25): a point read
// costs one granule per active part it cannot skip (every part spans the whole hash range),
// so fewer parts mean faster reads, and the price is write amplification (rows rewritten by
// merges per row inserted). Simulates steady ingest into tables of one layout, one table per
// policy, in a fresh data directory, and prints for each: parts a read sees after each insert
// (mean and max), parts at the end, and rows merged per row inserted.
//
//   npx tsx bench/merge-policy.ts [--dir /tmp/merge-policy] [--inserts 120] [--rows 20000] [--idle 90] [--only 080] [--layout 090|021]
//
// Layouts: 090 (default) is tx_by_signature_v3's (migration 090: the record as one JSON
// array column, a Bloom filter of sig_key, compact parts); 021 is the record-like columns the
// runs in bench/RESULTS.md ("Merge policy") used for tx_by_signature_v2 (default part types).
// Rows are generated in the engine (random 64-bit keys, record-like fields); the policies
// differ only in their MergeTree settings. `merge_selector_base=2` is the policy 080 chose and
// 090 keeps; the last one is 080's first draft, dropped after these runs.
import { rmSync } from 'node:fs';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { flag, machine, timeMs } from './bench-support.ts';

const dir = flag('dir', '/tmp/merge-policy');
const INSERTS = Number(flag('inserts', '120'));
const ROWS = Number(flag('rows', '20000'));
const IDLE = Number(flag('idle', '90'));
const LAYOUT = flag('layout', '090');
if (LAYOUT !== '090' && LAYOUT !== '021') throw new Error(`--layout is 090 or 021, not ${LAYOUT}`);
rmSync(dir, { recursive: true, force: true });
const wh = new EmbeddedWarehouse(dir);

const POLICIES: Record<string, string> = {
  default: '',
  'merge_selector_base=2': ', merge_selector_base = 2',
  'min_age_to_force_merge_seconds=30': ', min_age_to_force_merge_seconds = 30',
  both: ', merge_selector_base = 2, min_age_to_force_merge_seconds = 30',
  "080's first draft (forced merges on the whole partition only)":
    ', merge_selector_base = 2, min_age_to_force_merge_seconds = 30, min_age_to_force_merge_on_partition_only = 1',
};

/** ROWS record-like rows from `from` on, as the layout stores them (090: the array its view writes). */
const rows = (i: number, from: number): string => {
  const fields = `cityHash64(number, ${i}) AS sig_key, base58Encode(reinterpretAsString(sipHash128(number, ${i}))) AS signature, 0 AS instruction_index,
    300000000 + number AS slot, toDateTime(1764000000 + intDiv(number, 50), 'UTC') AS block_time, 'prog' || toString(number % 12) AS program_id,
    5000 + number % 1000 AS fee, number % 200000 AS compute_units, number % 10 > 0 AS success`;
  return LAYOUT === '090'
    ? `SELECT sig_key, instruction_index, toJSONString((signature, instruction_index, toString(slot), toUInt32(block_time), program_id, 'proto' || toString(number % 12),
        'swap', toString(fee), compute_units, toUInt16(number % 40), success)) FROM (SELECT number, ${fields} FROM numbers(${from}, ${ROWS}))`
    : `SELECT sig_key, signature, instruction_index, slot, block_time, program_id, fee, compute_units, success FROM (SELECT ${fields} FROM numbers(${from}, ${ROWS}))`;
};
const merged = async () => Number((await wh.query<{ v: string }>("SELECT value AS v FROM system.events WHERE event = 'MergedRows'"))[0]?.v ?? 0);
const parts = async (t: string) =>
  Number(
    (
      await wh.query<{ n: string }>('SELECT count() AS n FROM system.parts WHERE active AND database = currentDatabase() AND table = {t:String}', {
        params: { t },
      })
    )[0]!.n,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  console.log(`${machine()}\n${INSERTS} inserts of ${ROWS} rows per policy into ${LAYOUT}'s layout, then ${IDLE} s idle`);
  const results: Record<string, number | string>[] = [];
  const only = flag('only', '');
  for (const [i, [name, settings]] of Object.entries(POLICIES).entries()) {
    if (only !== '' && !name.includes(only) && name !== 'default') continue;
    const t = `mp_${i}`;
    await wh.exec(
      LAYOUT === '090'
        ? `CREATE TABLE ${t} (sig_key UInt64, instruction_index UInt16, record String CODEC(ZSTD(1)),
      INDEX sig_key_bloom sig_key TYPE bloom_filter(0.001) GRANULARITY 1)
      ENGINE = MergeTree ORDER BY (sig_key, instruction_index)
      SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192,
      min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776${settings}`
        : `CREATE TABLE ${t} (sig_key UInt64, signature String CODEC(ZSTD(1)), instruction_index UInt16, slot UInt64,
      block_time DateTime('UTC'), program_id LowCardinality(String), fee UInt64, compute_units UInt32, success Bool)
      ENGINE = MergeTree ORDER BY (sig_key, instruction_index)
      SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192${settings}`,
    );
    const before = await merged();
    const seen: number[] = [];
    const ms = await timeMs(async () => {
      for (let b = 0; b < INSERTS; b++) {
        await wh.exec(`INSERT INTO ${t} ${rows(i, b * ROWS)}`);
        seen.push(await parts(t));
      }
    });
    const during = (await merged()) - before;
    await sleep(IDLE * 1000);
    const after = (await merged()) - before;
    results.push({
      policy: name,
      'insert phase s': Number((ms / 1000).toFixed(1)),
      'parts after each insert: mean': Number((seen.reduce((a, b) => a + b, 0) / seen.length).toFixed(1)),
      max: Math.max(...seen),
      [`parts after ${IDLE} s idle`]: await parts(t),
      'rows merged / inserted (insert phase)': Number((during / (INSERTS * ROWS)).toFixed(2)),
      'incl. idle': Number((after / (INSERTS * ROWS)).toFixed(2)),
    });
    await wh.exec(`DROP TABLE ${t} SYNC`);
    console.table(results.slice(-1));
  }
  console.table(results);
  console.log(JSON.stringify({ date: new Date().toISOString(), machine: machine(), layout: LAYOUT, inserts: INSERTS, rows: ROWS, results }));
} finally {
  await wh.close();
  rmSync(dir, { recursive: true, force: true });
}
