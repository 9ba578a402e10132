// Deterministic demo data, generated inside the engine: every value is a hash of
// (seed, row number), so the same seed and window give the same rows on any machine, and
// no row passes through JavaScript when seeding (INSERT ... SELECT FROM numbers()).
// The same SELECT also renders ingest records (NDJSON) for the Kafka and HTTP sources.
import { DEMO_ACCOUNT_POOL, DEMO_SEED_SLICE_ROWS, DEMO_SIG_CHUNKS } from '../core/limits/ingest.ts';
import { MAX_TRANSACTION_INDEX } from '../core/limits/record-id.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { CU_EXCEEDED, DEMO_DRAWS, PROTOCOL_PROFILES, SHARE_SCALE, SLOT_ANCHOR, WELL_KNOWN, type ProtocolProfile } from './protocol-profiles.ts';
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
  /**
   * Added to each row number for its identity (signature, draws), not its time: the live
   * trickle's windows take ids of their own, past the seeded ones (default 0: the seeded data set).
   */
  idBase?: number;
}

const lit = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const arr = (xs: readonly (string | number)[]): string => `[${xs.map((x) => (typeof x === 'number' ? String(x) : lit(x))).join(', ')}]`;
const nested = (ps: readonly ProtocolProfile[], f: (p: ProtocolProfile) => readonly (string | number)[]): string => `[${ps.map((p) => arr(f(p))).join(', ')}]`;
const cumulative = (ws: readonly number[]): number[] => {
  let acc = 0;
  return ws.map((w) => (acc += w));
};

// intHash64 is a cheap 64-bit mixer; salting a per-row base hash gives independent draws
// at a fraction of sipHash's cost (hashing dominates generation time).
/** A draw of the row (`n`) or of its transaction's first row (`src`). */
const h = (salt: number, of = 'n'): string => `intHash64(${of === 'n' ? 'row_hash' : 'src_hash'} + ${salt})`;
/** A draw as a fraction in [0, 1), to a millionth. */
const unit = (salt: number, of = 'n'): string => `((${h(salt, of)} % 1000000) / 1000000.0)`;
/** Bits of a hash that pick one of the signature chunks. */
const SIG_CHUNK_BITS = Math.log2(DEMO_SIG_CHUNKS);
const sigPart = (hash: string, k: number): string => `chunks[1 + bitAnd(bitShiftRight(${hash}, ${SIG_CHUNK_BITS * k}), ${DEMO_SIG_CHUNKS - 1})]`;
const address = (label: string): string =>
  `base58Encode(concat(sipHash128({seed:UInt64}, '${label}', number), sipHash128({seed:UInt64}, '${label}2', number)))`;
const D = DEMO_DRAWS;

/** The profiles as SQL array literals the generator indexes by protocol (p) and instruction (t).
 *  Constants come from our own profile table, never from a caller. */
function profileArrays(profiles: readonly ProtocolProfile[]) {
  const pCum = cumulative(profiles.map((p) => p.weight));
  // Pools: one flat array, each protocol's pools from poolStart[p] + 1; aggregators use the
  // pools of the venues they route through (those in this window's profiles).
  const index = new Map(profiles.map((p, k) => [p.protocol, k + 1]));
  return {
    pNames: arr(profiles.map((p) => p.protocol)),
    pPrograms: arr(profiles.map((p) => p.programId)),
    pCum,
    pFail: arr(profiles.map((p) => Math.round(p.failRate * SHARE_SCALE))),
    tNames: nested(profiles, (p) => p.instructions.map((x) => x.name)),
    tCum: nested(profiles, (p) => cumulative(p.instructions.map((x) => x.weight))),
    tCuMin: nested(profiles, (p) => p.instructions.map((x) => x.cuMin)),
    tCuSpan: nested(profiles, (p) => p.instructions.map((x) => x.cuMax - x.cuMin + 1)),
    tAccMin: nested(profiles, (p) => p.instructions.map((x) => x.accMin)),
    tAccSpan: nested(profiles, (p) => p.instructions.map((x) => x.accMax - x.accMin + 1)),
    tSigners: nested(profiles, (p) => p.instructions.map((x) => x.signers)),
    eNames: nested(profiles, (p) => p.errors.map(([e]) => e)),
    eCum: nested(profiles, (p) => cumulative(p.errors.map(([, w]) => w))),
    fPrio: arr(profiles.map((p) => Math.round(p.fee.prioritized * SHARE_SCALE))),
    fMedian: arr(profiles.map((p) => p.fee.cuPriceMedian)),
    // sigma of a log-normal from its median and p99 (2.3263: the standard normal's 99th percentile)
    fSigma: arr(profiles.map((p) => Number((Math.log(p.fee.cuPriceP99 / p.fee.cuPriceMedian) / 2.3263).toFixed(4)))),
    fHeadroom: arr(profiles.map((p) => p.fee.cuLimitHeadroom)),
    fMax: arr(profiles.map((p) => p.fee.maxPriorityLamports)),
    pools: arr(profiles.map((x) => x.pools)),
    poolStart: arr(cumulative([0, ...profiles.map((p) => p.pools)]).slice(0, profiles.length)),
    totalPools: profiles.reduce((s, p) => s + p.pools, 0),
    routes: `[${profiles.map((p) => `CAST(${arr((p.routesThrough ?? []).flatMap((r) => index.get(r) ?? []))} AS Array(UInt32))`).join(', ')}]`,
    pumpMints: arr(profiles.map((p) => (p.mints === 'pump' ? 1 : 0))),
    mintPool: Math.max(1, ...profiles.map((p) => p.pools)),
  };
}
type ProfileArrays = ReturnType<typeof profileArrays>;

/** The pools of addresses rows draw from: signature chunks, wallets, pools and mints. */
function addressPools(a: ProfileArrays): string {
  return `
WITH
  (SELECT groupArray(substring(base58Encode(sipHash128({seed:UInt64}, 'sig', number)), 1, 11))
     FROM numbers(${DEMO_SIG_CHUNKS})) AS chunks,
  (SELECT groupArray(${address('acct')}) FROM numbers(${DEMO_ACCOUNT_POOL})) AS wallets,
  (SELECT groupArray(${address('pool')}) FROM numbers(${a.totalPools})) AS pool_addrs,
  (SELECT groupArray(${address('mint')}) FROM numbers(${a.mintPool})) AS market_mints,
  -- pump.fun mints are vanity addresses ending in "pump"
  (SELECT groupArray(concat(substring(${address('pumpmint')}, 1, 40), 'pump')) FROM numbers(${a.mintPool})) AS pump_mints`;
}

/** The generator's SELECT: one row per number in the window, columns named as the ingest record. */
function generatorSelect(profiles: readonly ProtocolProfile[]): string {
  const a = profileArrays(profiles);
  return `${addressPools(a)}
SELECT signature, instruction_index, transaction_index, slot, block_time, program_id, protocol_name, instruction_type,
       fee, compute_units, accounts, accounts_count, success, error_message, log_messages, raw_data
FROM
(
  SELECT
    number AS n,
    -- the row's identity (what its hashes draw from); n places it in the window's time
    n + {base:UInt64} AS id,
    intHash64(bitXor(id, intHash64({seed:UInt64}))) AS row_hash,
    -- about one record in ten is a transaction's second instruction (same signature, time,
    -- program, fee and outcome: a transaction succeeds or fails as a whole)
    toUInt16(n > 0 AND ${h(D.secondInstruction)} % 10 = 0) AS instruction_index,
    n - instruction_index AS src,
    id - instruction_index AS src_id,
    intHash64(bitXor(src_id, intHash64({seed:UInt64}))) AS src_hash,
${transactionColumns(a)},
${accountColumns(a)}
  FROM numbers({offset:UInt64}, {count:UInt64})
)`;
}

/** What a row's transaction is: protocol, instruction, outcome, compute units, fee, time, slot, signature. */
function transactionColumns(a: ProfileArrays): string {
  const { pCum, tCum, tCuMin, tCuSpan, fHeadroom } = a;
  return `    arrayFirstIndex(c -> c > ${h(D.protocol, 'src')} % ${pCum.at(-1)}, ${arr(pCum)}) AS p,
    ${a.pNames}[p] AS protocol_name,
    ${a.pPrograms}[p] AS program_id,
    arrayFirstIndex(c -> c > ${h(D.instruction)} % arrayElement(${tCum}[p], -1), ${tCum}[p]) AS t,
    -- the transaction's first instruction: it sets the signers and the CU limit (t0 = t on row 0)
    arrayFirstIndex(c -> c > ${h(D.instruction, 'src')} % arrayElement(${tCum}[p], -1), ${tCum}[p]) AS t0,
    ${a.tNames}[p][t] AS instruction_type,
    toBool((${h(D.outcome, 'src')} % ${SHARE_SCALE}) >= ${a.pFail}[p]) AS success,
    toUInt32(${tCuMin}[p][t] + ${h(D.computeUnits)} % ${tCuSpan}[p][t]) AS cu_full,
    -- the transaction's CU limit covers its instructions: the first (row src) and, when row
    -- src + 1 is its second instruction, that one (its hashes are read here the way that row
    -- reads its own), with the protocol's headroom, in thousands, at most 1.4M
    toUInt32(${tCuMin}[p][t0] + ${h(D.computeUnits, 'src')} % ${tCuSpan}[p][t0]) AS cu_first,
    intHash64(bitXor(src_id + 1, intHash64({seed:UInt64}))) AS next_hash,
    arrayFirstIndex(c -> c > intHash64(next_hash + ${D.instruction}) % arrayElement(${tCum}[p], -1), ${tCum}[p]) AS t1,
    if(intHash64(next_hash) % 10 = 0, toUInt32(${tCuMin}[p][t1] + intHash64(next_hash + ${D.computeUnits}) % ${tCuSpan}[p][t1]), 0) AS cu_second,
    toUInt32(least(1400000, ceil((cu_first + cu_second) * ${fHeadroom}[p] / 1000) * 1000)) AS cu_limit,
    -- what is left of the limit when this instruction starts (the "of Y" of its log): all of
    -- it for the first instruction, less what the first consumed for the second
    toUInt32(if(instruction_index = 0, cu_limit, cu_limit - least(cu_limit, cu_first))) AS cu_budget,
    ${a.eNames}[p][arrayFirstIndex(c -> c > ${h(D.errorKind, 'src')} % arrayElement(${a.eCum}[p], -1), ${a.eCum}[p])] AS error_kind,
    -- a failed call stops part-way, or (the transaction's first instruction) at the CU limit
    -- when that is what it ran out of; no instruction consumes more than is left of the limit
    least(cu_budget, if(success, cu_full, if(error_kind = ${lit(CU_EXCEEDED)} AND instruction_index = 0, cu_limit, toUInt32(intDiv(cu_full * (40 + ${h(D.failedShare)} % 55), 100))))) AS compute_units,
    -- 5000 lamports per signature, plus (for the protocol's prioritized share) a priority fee:
    -- a log-normal CU price (micro-lamports, Box-Muller) times the CU limit, capped
    ${a.fMedian}[p] * exp(${a.fSigma}[p] * sqrt(-2 * log((${h(D.cuPriceRadius, 'src')} % 1000000 + 1) / 1000000.0)) * cos(2 * pi() * ${unit(D.cuPriceAngle, 'src')})) AS cu_price,
    if((${h(D.prioritized, 'src')} % ${SHARE_SCALE}) < ${a.fPrio}[p], least(${a.fMax}[p], ceil(cu_price * cu_limit / 1000000)), 0) AS priority_fee,
    toUInt64(5000 * ${a.tSigners}[p][t0] + priority_fee) AS fee,
    toDateTime({start:UInt32} + intDiv(src * {span:UInt64}, {total:UInt64}), 'UTC') AS block_time,
    toUInt64(${SLOT_ANCHOR.slot} + intDiv((toUInt32(block_time) - ${SLOT_ANCHOR.time}) * 5, 2)) AS slot,
    -- the transaction's index in its block: one slot a second here, so the transaction's rank
    -- among the second's (src - the second's first src), spread by {txstep} with a jitter
    -- below it, as DeFi transactions sit among votes and others (unique, in order, < 65536)
    toUInt32((src - intDiv((toUInt32(block_time) - {start:UInt32}) * {total:UInt64} + {span:UInt64} - 1, {span:UInt64})) * {txstep:UInt32}
      + ${h(D.transactionJitter, 'src')} % {txstep:UInt32}) AS transaction_index,
    concat(${[0, 1, 2, 3].map((k) => sigPart(h(D.signatureHigh, 'src'), k)).join(', ')},
           ${[0, 1, 2, 3].map((k) => sigPart(h(D.signatureLow, 'src'), k)).join(', ')}) AS signature`;
}

/** The accounts a row lists and counts, and a failure's message and log. */
function accountColumns(a: ProfileArrays): string {
  const { pumpMints } = a;
  const majors = arr(WELL_KNOWN.majorMints);
  return `    -- accounts: the signing wallet (Zipf-like over ${DEMO_ACCOUNT_POOL}), the pool it trades (Zipf-like
    -- over the protocol's pools, or a routed venue's), the pool's two mints and the token program
    ${a.routes}[p] AS venues,
    if(length(venues) = 0, p, venues[1 + ${h(D.venue, 'src')} % greatest(1, length(venues))]) AS q,
    toUInt32(floor(exp(${unit(D.poolRank, 'src')} * log(${a.pools}[q])))) AS k,
    pool_addrs[${a.poolStart}[q] + k] AS pool,
    if(${pumpMints}[q] = 1, pump_mints[k], if(k <= ${WELL_KNOWN.majorMints.length}, ${majors}[k], market_mints[k])) AS token,
    if(${pumpMints}[q] = 0 AND k > 1 AND ${h(D.quoteMint, 'src')} % 5 = 0, ${lit(WELL_KNOWN.majorMints[0])}, ${lit(WELL_KNOWN.wrappedSol)}) AS quote,
    if(${pumpMints}[q] = 1 AND ${h(D.tokenProgram, 'src')} % 10 < 3, ${lit(WELL_KNOWN.token2022Program)}, ${lit(WELL_KNOWN.tokenProgram)}) AS token_program,
    -- direct indexing, no lambda: a lambda capturing the pool would copy it for every row
    [wallets[toUInt32(floor(exp(${unit(D.wallet, 'src')} * log(${DEMO_ACCOUNT_POOL - 1}))))], pool, quote, token, token_program] AS accounts,
    -- accounts lists the named accounts; accounts_count also counts vaults, programs and sysvars
    toUInt16(greatest(length(accounts), ${a.tAccMin}[p][t] + ${h(D.accountsCount)} % ${a.tAccSpan}[p][t])) AS accounts_count,
    if(success, '', concat('Program ', program_id, ' failed: ', error_kind)) AS error_message,
    if(success, '', concat(
      'Program ', program_id, ' invoke [1]\\n',
      'Program log: Instruction: ', instruction_type, '\\n',
      'Program log: Error: ', error_kind, '\\n',
      'Program ', program_id, ' consumed ', toString(compute_units), ' of ', toString(cu_budget), ' compute units\\n',
      'Program ', program_id, ' failed: ', error_kind)) AS log_messages,
    if(success, '', base58Encode(sipHash128({seed:UInt64}, id, 12))) AS raw_data`;
}

function windowParams(w: DemoWindow): Record<string, number> {
  if (!(w.endTime > w.startTime)) throw new Error('demo window: endTime must be after startTime');
  if (w.offset + w.count > w.total) throw new Error('demo window: offset + count exceeds total');
  const span = w.endTime - w.startTime;
  // Transactions a second (one slot a second here): their indexes spread up to ~7 apart, below 65536.
  const perSecond = Math.ceil(w.total / span) + 1;
  if (perSecond > MAX_TRANSACTION_INDEX) throw new Error('demo window: more transactions a second than a block can index');
  const txstep = Math.max(1, Math.min(7, Math.floor(MAX_TRANSACTION_INDEX / perSecond)));
  return { seed: w.seed, start: w.startTime, span, total: w.total, offset: w.offset, count: w.count, base: w.idBase ?? 0, txstep };
}

/** Insert one window of demo rows straight into the base table (views fill on insert). */
export async function insertDemoRows(wh: Warehouse, w: DemoWindow): Promise<void> {
  // A store before migration 110 (the migration tests seed one) has no transaction_index.
  const [before110] = await wh.query<{ n: string }>(
    "SELECT count() AS n FROM system.columns WHERE database = currentDatabase() AND table = {t:String} AND name = 'transaction_index'",
    { params: { t: TABLES.transactions } },
  );
  const columns = before110?.n === '0' ? BASE_COLUMNS.filter((c) => c !== 'transaction_index') : BASE_COLUMNS;
  const select = generatorSelect(w.profiles ?? PROTOCOL_PROFILES);
  const sql = `INSERT INTO ${TABLES.transactions} (${columns.join(', ')})\n${columns === BASE_COLUMNS ? select : `SELECT * EXCEPT (transaction_index) FROM (${select})`}`;
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
  const slice = opts.sliceRows ?? DEMO_SEED_SLICE_ROWS;
  const t0 = Date.now();
  for (let offset = 0; offset < opts.total; offset += slice) {
    const count = Math.min(slice, opts.total - offset);
    await insertDemoRows(wh, { ...opts, offset, count });
    onProgress({ done: offset + count, total: opts.total, elapsedMs: Date.now() - t0 });
  }
}
