// How values and draws are written into export statements: literals (export-writer.ts says
// why not bound parameters) and the hashes that pick a row's sample and split. The values are
// never client text: names checked against allow-lists or the registry, whole numbers,
// finite floats the engine computed, and category values read from the data, each rendered
// here so that quoting lives in one place.
import { activeSplits, type Sampling, type Splits } from './export-config.ts';

/** A SQL literal of a string, a whole number or a list of them. */
export function literal(v: string | number | readonly (string | number)[]): string {
  if (Array.isArray(v)) return `[${v.map((x) => literal(x)).join(', ')}]`;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error(`not a whole number: ${v}`);
    return String(v);
  }
  return `'${String(v).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A Float64 literal that reads back as exactly this double (JavaScript writes the shortest round-trip form). */
export function floatLiteral(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
  return `toFloat64(${literal(String(v))})`;
}

/**
 * Hashes are taken modulo 2^32 and compared with integer thresholds: the same figures in
 * any language, and 1/2^32 resolution for rates and split fractions.
 */
export const HASH_RANGE = 2 ** 32;
export const threshold = (fraction: number): number => Math.min(HASH_RANGE, Math.round(fraction * HASH_RANGE));
export const hashOf = (column: string, seed: number): string => `(cityHash64(${column}, toUInt64(${literal(seed)})) % ${HASH_RANGE})`;

/**
 * The row is kept by a RANDOM sample: a hash of the signature with the sampling seed, so a
 * transaction's instructions are kept or dropped together, independently of its split.
 */
export function sampleCondition(sampling: Sampling | null, column = 'signature'): string {
  if (sampling === null || sampling.rate >= 1) return '1';
  return `${hashOf(column, sampling.seed)} < ${threshold(sampling.rate)}`;
}

/** The split a row falls in, by a hash of its signature with the split seed: a transaction never straddles splits. */
export function splitExpression(splits: Splits, seed: number, column = 'signature'): string {
  const active = activeSplits(splits);
  if (active.length === 1) return `'${active[0]}'`;
  const h = hashOf(column, seed);
  const t1 = threshold(splits.train);
  const t2 = threshold(splits.train + splits.test);
  return `multiIf(${h} < ${t1}, 'train', ${h} < ${t2}, 'test', 'val')`;
}
