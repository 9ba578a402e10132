// Why point reads fall when a store grows (issue 25): what one batch of getTransaction
// lookups costs the engine, read from its own counters, on a seeded store.
//
//   npx tsx bench/point-reads.ts --dir /path/to/store [--batches 20] [--batch 100] [--optimize]
//   /work/shared/tools/memcap 1300M -- npx tsx bench/point-reads.ts --dir ...   (past memory)
//
// Prints the active parts, the primary-key and mark memory of each lookup table, then for
// batches of random keys (the service's statement and settings, signature-lookup.ts: the
// record column of tx_by_signature_v3, keys as a literal list): the time, parts and marks
// selected, bytes read from disk and decompressed, and mark-cache misses per key. The
// records are unpacked as the service does, outside the timing (the engine's share only).
// --optimize merges the by-signature table to one part per partition first (OPTIMIZE FINAL),
// to separate the part count from the size of the store. Needs a store at migration 090.
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';
import { unpackSignatureRecord } from '../warehouse/signature-records.ts';
import { flag, machine, median, POINT_READ_SETTINGS, pointReadSql, requireCurrentSchema, timeMs, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const BATCHES = Number(flag('batches', '20'));
const BATCH = Number(flag('batch', '100'));
const wh = new EmbeddedWarehouse(dir);
const EVENTS = [
  'SelectedParts',
  'SelectedMarks',
  'SelectedRanges',
  'OSReadBytes',
  'OSReadChars',
  'ReadCompressedBytes',
  'CompressedReadBufferBlocks',
  'MarkCacheMisses',
  'MarkCacheHits',
  'LoadedPrimaryIndexFiles',
  'PrimaryIndexCacheMisses',
  'ReadBufferFromFileDescriptorRead',
] as const;

async function events(): Promise<Record<string, number>> {
  const rows = await wh.query<{ event: string; value: string }>('SELECT event, value FROM system.events WHERE event IN {e:Array(String)}', {
    params: { e: EVENTS },
  });
  return Object.fromEntries(EVENTS.map((e) => [e, Number(rows.find((r) => r.event === e)?.value ?? 0)]));
}

try {
  console.log(machine());
  await requireCurrentSchema(wh, dir);
  if (process.argv.includes('--optimize')) {
    const ms = await timeMs(() => wh.exec(`OPTIMIZE TABLE ${V3_TABLE} FINAL`));
    console.log(`OPTIMIZE FINAL ${V3_TABLE}: ${(ms / 1000).toFixed(1)} s`);
  }
  await wh.exec('SYSTEM STOP MERGES');
  console.table(
    await wh.query(
      `SELECT table, count() AS parts, sum(rows) AS rows, formatReadableSize(sum(bytes_on_disk)) AS disk,
      formatReadableSize(sum(primary_key_bytes_in_memory)) AS pk_memory, sum(marks) AS marks,
      formatReadableSize(sum(marks_bytes)) AS marks_on_disk
    FROM system.parts WHERE active AND database = currentDatabase() AND table IN {t:Array(String)} GROUP BY table ORDER BY table`,
      { params: { t: [TABLES.transactions, V3_TABLE, TABLES.txByAddress] } },
    ),
  );
  // Random stored keys, read from the sig_key column alone (8 B a record; a sample of
  // signatures, as rpc-load.ts takes, reads the whole signature column into the cache).
  const [range] = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${V3_TABLE}`);
  const total = Number(range!.n);
  const sample = (
    await wh.query<{ k: string }>(`SELECT toString(sig_key) AS k FROM ${V3_TABLE} WHERE intHash64(sig_key) % {m:UInt64} = 0 LIMIT {n:UInt32}`, {
      params: { m: Math.max(1, Math.floor(total / (4 * BATCHES * BATCH))), n: 2 * BATCHES * BATCH },
    })
  ).map((r) => r.k);
  const rows: Record<string, number | string>[] = [];
  for (const size of [1, BATCH]) {
    const times: number[] = [];
    let found = 0;
    const before = await events();
    for (let b = 0; b < BATCHES; b++) {
      const picks = Array.from({ length: size }, () => sample[Math.floor(Math.random() * sample.length)]!);
      let got: { record: string }[] = [];
      times.push(
        await timeMs(async () => {
          got = await wh.query<{ record: string }>(pointReadSql(picks), { settings: POINT_READ_SETTINGS });
        }),
      );
      for (const r of got) unpackSignatureRecord(r.record);
      found += got.length;
    }
    const after = await events();
    const per = (e: string) => Number(((after[e]! - before[e]!) / (BATCHES * size)).toFixed(1));
    rows.push({
      keys: size,
      'records/key': Number((found / (BATCHES * size)).toFixed(2)),
      'ms/batch (median)': Number(median(times).toFixed(2)),
      'ms/key': Number((median(times) / size).toFixed(3)),
      ...Object.fromEntries(EVENTS.map((e) => [`${e}/key`, per(e)])),
    });
  }
  console.table(rows);
  console.log(JSON.stringify({ date: new Date().toISOString(), machine: machine(), records: total, results: rows }));
} finally {
  await wh.close();
}
