// Deterministic demo data, generated inside the engine: every value is a hash of
// (seed, row number), so the same seed and window give the same rows on any machine, and
// no row passes through JavaScript when seeding (INSERT ... SELECT FROM numbers()).
// The same SELECT also renders ingest records (NDJSON) for the Kafka and HTTP sources.
import type { Warehouse } from '../warehouse/warehouse.ts';
import { PROTOCOL_PROFILES, type ProtocolProfile } from './protocol-profiles.ts';
import { BASE_COLUMNS, TABLES } from '../warehouse/tables.ts';

export interface DemoWindow {
  seed: number;
  /** Rows in the whole data set; block times spread evenly over [startTime, endTime). */
  total: number;
  /** First row number of this slice (0-based) and how many rows it holds. */
  offset: number;
  count: number;
  startTime: number;
  endTime: number;
  /** Restrict to these protocols (default: all of the registry, active or not). */
  profiles?: readonly ProtocolProfile[];
}

const SIG_CHUNKS = 65_536; // 8 chunks x 11 base58 chars = an 88-char signature
const ACCOUNT_POOL = 100_000; // addresses drawn log-uniformly: a few are very hot (Zipf-like)
const SLOT_ANCHOR = { time: 1_700_000_000, slot: 229_000_000 };

const lit = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const arr = (xs: readonly (string | number)[]): string =>
  `[${xs.map((x) => (typeof x === 'number' ? String(x) : lit(x))).join(', ')}]`;
const cumulative = (ws: readonly number[]): number[] => {
  let acc = 0;
  return ws.map((w) => (acc += w));
};

/** The generator's SELECT: one row per number in the window, columns named as the ingest record. */
function generatorSelect(profiles: readonly ProtocolProfile[]): string {
  // Constants below come from our own profile table, never from a caller.
  const pNames = arr(profiles.map((p) => p.protocol));
  const pPrograms = arr(profiles.map((p) => p.programId));
  const pCum = cumulative(profiles.map((p) => p.weight));
  const pFail = arr(profiles.map((p) => Math.round(p.failRate * 10_000)));
  const tNames = `[${profiles.map((p) => arr(p.instructions.map((x) => x.name))).join(', ')}]`;
  const tCum = `[${profiles.map((p) => arr(cumulative(p.instructions.map((x) => x.weight)))).join(', ')}]`;
  const tCuMin = `[${profiles.map((p) => arr(p.instructions.map((x) => x.cuMin))).join(', ')}]`;
  const tCuSpan = `[${profiles.map((p) => arr(p.instructions.map((x) => x.cuMax - x.cuMin + 1))).join(', ')}]`;
  const pErrors = `[${profiles.map((p) => arr(p.errors)).join(', ')}]`;
  // intHash64 is a cheap 64-bit mixer; salting a per-row base hash gives independent draws
  // at a fraction of sipHash's cost (hashing dominates generation time).
  const h = (salt: number, of = 'n'): string => `intHash64(${of === 'n' ? 'row_hash' : 'src_hash'} + ${salt})`;
  const unit = (salt: number, of = 'n'): string => `((${h(salt, of)} % 1000000) / 1000000.0)`;
  const sigPart = (hash: string, k: number): string =>
    `chunks[1 + bitAnd(bitShiftRight(${hash}, ${16 * k}), 65535)]`;

  return `
WITH
  (SELECT groupArray(substring(base58Encode(sipHash128({seed:UInt64}, 'sig', number)), 1, 11))
     FROM numbers(${SIG_CHUNKS})) AS chunks,
  (SELECT groupArray(base58Encode(concat(sipHash128({seed:UInt64}, 'acct', number), sipHash128({seed:UInt64}, 'acct2', number))))
     FROM numbers(${ACCOUNT_POOL})) AS pool
SELECT signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type,
       fee, compute_units, accounts, accounts_count, success, error_message, log_messages, raw_data
FROM
(
  SELECT
    number AS n,
    intHash64(bitXor(n, intHash64({seed:UInt64}))) AS row_hash,
    -- about one record in ten is a transaction's second instruction (same signature and time)
    toUInt16(n > 0 AND ${h(0)} % 10 = 0) AS instruction_index,
    n - instruction_index AS src,
    intHash64(bitXor(src, intHash64({seed:UInt64}))) AS src_hash,
    arrayFirstIndex(c -> c > ${h(1)} % ${pCum.at(-1)}, ${arr(pCum)}) AS p,
    ${pNames}[p] AS protocol_name,
    ${pPrograms}[p] AS program_id,
    arrayFirstIndex(c -> c > ${h(2)} % arrayElement(${tCum}[p], -1), ${tCum}[p]) AS t,
    ${tNames}[p][t] AS instruction_type,
    toBool((${h(4)} % 10000) >= ${pFail}[p]) AS success,
    toUInt32(${tCuMin}[p][t] + ${h(3)} % ${tCuSpan}[p][t]) AS cu_full,
    if(success, cu_full, intDiv(cu_full, 3)) AS compute_units,
    -- 5000-lamport base fee plus, on 3 of 4, a heavy-tailed priority fee (1e3..1e6, mostly small)
    toUInt64(5000 + if(${h(5, 'src')} % 4 = 0, 0, floor(exp(log(1000) + pow(${unit(5, 'src')}, 2) * log(1000))))) AS fee,
    toDateTime({start:UInt32} + intDiv(src * {span:UInt64}, {total:UInt64}), 'UTC') AS block_time,
    toUInt64(${SLOT_ANCHOR.slot} + intDiv((toUInt32(block_time) - ${SLOT_ANCHOR.time}) * 5, 2)) AS slot,
    concat(${[0, 1, 2, 3].map((k) => sigPart(h(6, 'src'), k)).join(', ')},
           ${[0, 1, 2, 3].map((k) => sigPart(h(7, 'src'), k)).join(', ')}) AS signature,
    -- direct indexing, no lambda: a lambda capturing the pool would copy it for every row
    arraySlice([${[0, 1, 2, 3, 4, 5].map((k) => `pool[toUInt32(floor(exp(${unit(10 + k, 'src')} * log(${ACCOUNT_POOL - 1}))))]`).join(', ')}],
               1, 3 + ${h(8, 'src')} % 4) AS accounts,
    -- accounts lists the named accounts; accounts_count also counts programs and sysvars
    toUInt16(length(accounts) + 6 + ${h(9, 'src')} % 10) AS accounts_count,
    ${pErrors}[p][1 + ${h(11)} % length(${pErrors}[p])] AS error_kind,
    if(success, '', concat('Program ', program_id, ' failed: ', error_kind)) AS error_message,
    if(success, '', concat(
      'Program ', program_id, ' invoke [1]\\n',
      'Program log: Instruction: ', instruction_type, '\\n',
      'Program log: Error: ', error_kind, '\\n',
      'Program ', program_id, ' consumed ', toString(compute_units), ' of 1400000 compute units\\n',
      'Program ', program_id, ' failed: ', error_kind)) AS log_messages,
    if(success, '', base58Encode(sipHash128({seed:UInt64}, n, 12))) AS raw_data
  FROM numbers({offset:UInt64}, {count:UInt64})
)`;
}


function windowParams(w: DemoWindow): Record<string, number> {
  if (!(w.endTime > w.startTime)) throw new Error('demo window: endTime must be after startTime');
  if (w.offset + w.count > w.total) throw new Error('demo window: offset + count exceeds total');
  return { seed: w.seed, start: w.startTime, span: w.endTime - w.startTime, total: w.total, offset: w.offset, count: w.count };
}

/** Insert one window of demo rows straight into the base table (views fill on insert). */
export async function insertDemoRows(wh: Warehouse, w: DemoWindow): Promise<void> {
  const sql = `INSERT INTO ${TABLES.transactions} (${BASE_COLUMNS.join(', ')})\n${generatorSelect(w.profiles ?? PROTOCOL_PROFILES)}`;
  // Views run in parallel: they are independent and otherwise dominate insert time.
  await wh.exec(sql, { params: windowParams(w), settings: { parallel_view_processing: 1 } });
}

/** Render a window as NDJSON ingest records (block_time as Unix seconds, numbers unquoted). */
export async function demoRecordsNdjson(wh: Warehouse, w: DemoWindow): Promise<string> {
  const sql = `SELECT * REPLACE (toUInt32(block_time) AS block_time) FROM (${generatorSelect(w.profiles ?? PROTOCOL_PROFILES)})`;
  return wh.queryText(sql, 'JSONEachRow', {
    params: windowParams(w),
    settings: { output_format_json_quote_64bit_integers: 0 },
  });
}

export interface SeedProgress {
  done: number;
  total: number;
  elapsedMs: number;
}

/** Seed `total` rows in slices, reporting progress after each slice. */
export async function seedDemo(
  wh: Warehouse,
  opts: { seed: number; total: number; startTime: number; endTime: number; sliceRows?: number },
  onProgress: (p: SeedProgress) => void = () => {},
): Promise<void> {
  const slice = opts.sliceRows ?? 1_000_000;
  const t0 = Date.now();
  for (let offset = 0; offset < opts.total; offset += slice) {
    const count = Math.min(slice, opts.total - offset);
    await insertDemoRows(wh, { ...opts, offset, count });
    onProgress({ done: offset + count, total: opts.total, elapsedMs: Date.now() - t0 });
  }
}
