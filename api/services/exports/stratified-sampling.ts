// STRATIFIED sampling: every stratum (a value of the stratum column, protocol_name by
// default) keeps the same share of its rows, so the sample's mix of strata is the filtered
// rows' mix. RANDOM keeps each transaction with probability `rate`, which keeps the mix only
// on average: a small stratum can come out far from its share. Here each stratum s keeps
// k_s = floor(rate * n_s + 0.5) of its n_s rows, drawn by the same hash as RANDOM
// (cityHash64(signature, seed) % 2^32): the k_s rows of smallest hash, plus the other rows of
// the stratum with the same hash as the k_s-th (the other instructions of that one
// transaction, which are kept or dropped together). So the same seed over the same data keeps
// the same rows, and kept_s - k_s is at most the instructions of one transaction less one.
//
// Each stratum's threshold is found by the engine in two passes of bounded memory: counts per
// stratum and hash bucket (2^EXPORT_STRATUM_BUCKET_BITS buckets) locate the bucket holding the
// k_s-th hash; the second pass sorts only that bucket's hashes. The plan keeps the thresholds
// (JobWork.strata): a resumed job keeps the same rows.
import { EXPORT_STRATA_MAX, EXPORT_STRATUM_BUCKET_BITS } from '../../../core/limits/exports.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import type { Sampling, StratumColumn } from './export-config.ts';
import { floatLiteral, HASH_RANGE, hashOf, literal } from './export-sql.ts';
import { JobFailure } from './job-errors.ts';

/** The strata of a STRATIFIED export, as planned: parallel lists, one entry per stratum value. */
export interface StrataPlan {
  column: StratumColumn;
  /** The stratum's value as text (toString of the column), in the engine's order. */
  values: string[];
  /** Rows of each stratum before sampling. */
  rows: number[];
  /** Rows kept of each stratum. */
  kept: number[];
  /** A row of the stratum is kept when its hash is below this (0: none; 2^32: all). */
  thresholds: number[];
}

const BUCKET_DIVISOR = 2 ** (32 - EXPORT_STRATUM_BUCKET_BITS);

/** Rows a stratum of n rows keeps at `rate` (the same figure in any language). */
export const stratumTarget = (rate: number, n: number): number => Math.floor(rate * n + 0.5);

/** The WHERE condition that keeps a STRATIFIED sample's rows. */
export function stratifiedCondition(sampling: Sampling, strata: StrataPlan): string {
  if (strata.values.length === 0) return '0';
  return `${hashOf('signature', sampling.seed)} < transform(toString(${strata.column}), ${literal(strata.values)}, ${literal(strata.thresholds)}, toUInt64(0))`;
}

/** Find each stratum's threshold over the rows `where` selects (the filters, without sampling). */
export async function planStrata(wh: Warehouse, sampling: Sampling, where: string, settings: Settings): Promise<StrataPlan> {
  const column = sampling.stratifyBy ?? 'protocol_name';
  const h = hashOf('signature', sampling.seed);
  // Pass 1: per stratum, its rows, its target, and the bucket holding the target-th hash
  // with the rows of the buckets before it.
  const located = await wh.query<{ s: string; n: string | number; k: string | number; b: string | number; before: string | number }>(
    `SELECT s, n, k, buckets[i] AS b, if(i > 1, cums[i - 1], 0) AS before
     FROM (
       SELECT s, arraySum(counts) AS n, toUInt64(floor(${floatLiteral(sampling.rate)} * n + 0.5)) AS k,
              buckets, arrayCumSum(counts) AS cums, arrayFirstIndex(x -> x >= k, cums) AS i
       FROM (
         SELECT s, arrayMap(p -> p.1, sorted) AS buckets, arrayMap(p -> p.2, sorted) AS counts
         FROM (
           SELECT s, arraySort(groupArray((b, c))) AS sorted
           FROM (SELECT toString(${column}) AS s, intDiv(${h}, ${BUCKET_DIVISOR}) AS b, count() AS c
                 FROM ${TABLES.transactions} WHERE ${where} GROUP BY s, b)
           GROUP BY s
         )
       )
     )
     ORDER BY s LIMIT ${EXPORT_STRATA_MAX + 1}`,
    { settings },
  );
  if (located.length > EXPORT_STRATA_MAX) {
    throw new JobFailure(
      `sampling.stratifyBy ${column} has more than ${EXPORT_STRATA_MAX} distinct values in this export; stratified sampling is for categories: ` +
        'stratify by another column (protocol_name, the default) or sample RANDOM',
    );
  }
  const plan: StrataPlan = { column, values: [], rows: [], kept: [], thresholds: [] };
  const inner: { i: number; bucket: number; rank: number; before: number }[] = [];
  for (const r of located) {
    const n = Number(r.n);
    const k = Number(r.k);
    plan.values.push(r.s);
    plan.rows.push(n);
    if (k === 0 || k >= n) {
      plan.kept.push(k === 0 ? 0 : n);
      plan.thresholds.push(k === 0 ? 0 : HASH_RANGE);
    } else {
      plan.kept.push(0);
      plan.thresholds.push(0);
      inner.push({ i: plan.values.length - 1, bucket: Number(r.b), rank: k - Number(r.before), before: Number(r.before) });
    }
  }
  if (inner.length === 0) return plan;
  // Pass 2: within the located bucket of each stratum, the target-th hash, and how many of
  // the bucket's rows have a hash at or below it (ties: the same transaction's rows).
  const values = inner.map((x) => plan.values[x.i]!);
  const found = await wh.query<{ s: string; kth: string | number; le: string | number }>(
    `SELECT s, sorted[transform(s, ${literal(values)}, ${literal(inner.map((x) => x.rank))}, toUInt64(0))] AS kth,
            arrayCount(x -> x <= kth, sorted) AS le
     FROM (
       SELECT toString(${column}) AS s, arraySort(groupArray(${h})) AS sorted
       FROM ${TABLES.transactions}
       WHERE ${where} AND intDiv(${h}, ${BUCKET_DIVISOR}) = transform(toString(${column}), ${literal(values)}, ${literal(inner.map((x) => x.bucket))}, toUInt64(${BUCKET_DIVISOR}))
       GROUP BY s
     )`,
    { settings },
  );
  const byValue = new Map(found.map((r) => [r.s, r]));
  for (const x of inner) {
    const r = byValue.get(plan.values[x.i]!);
    // The data under the watermark does not change between the passes; a stratum missing here is a fault.
    if (r === undefined) throw new JobFailure(`the stratum ${plan.values[x.i]} changed while the export was planned; try the export again`);
    plan.thresholds[x.i] = Number(r.kth) + 1;
    plan.kept[x.i] = x.before + Number(r.le);
  }
  return plan;
}

/** The largest difference between a stratum's share of the sample and its share of the filtered rows. */
export function maxShareDeviation(strata: StrataPlan): number {
  const n = strata.rows.reduce((a, x) => a + x, 0);
  const k = strata.kept.reduce((a, x) => a + x, 0);
  if (n === 0 || k === 0) return 0;
  return Math.max(0, ...strata.values.map((_, i) => Math.abs(strata.kept[i]! / k - strata.rows[i]! / n)));
}
