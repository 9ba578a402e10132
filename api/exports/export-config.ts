// What an export job is asked for, checked and normalised once for every interface:
// GraphQL's exportDataset(config) and the SQL export route pass the client's object here
// and get back a complete spec (defaults filled, seeds drawn) or a 400 naming the part at
// fault by its logical key (core/errors.ts `param()`), which each interface words.
import { randomInt } from 'node:crypto';
import { AppError, Errors, param, type ExportParamKey } from '../../core/errors.ts';
import { MAX_BLOCK_DATE, MIN_BLOCK_DATE } from '../../core/limits.ts';
import { daySpan, type DayNames } from '../../core/request-check.ts';

export const EXPORT_FORMATS = ['PARQUET', 'CSV', 'JSONL'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The engine's output format and the file extension of each export format. */
export const FORMAT_FILES: Readonly<Record<ExportFormat, { engine: string; ext: string; contentType: string }>> = {
  PARQUET: { engine: 'Parquet', ext: 'parquet', contentType: 'application/vnd.apache.parquet' },
  CSV: { engine: 'CSVWithNames', ext: 'csv', contentType: 'text/csv; charset=utf-8' },
  JSONL: { engine: 'JSONEachRow', ext: 'jsonl', contentType: 'application/x-ndjson; charset=utf-8' },
};

/**
 * Columns of `transactions` an export may select (SPEC's SQL table plus the record's other
 * fields), in the order a default export writes them. ingested_at is internal.
 */
export const EXPORT_COLUMNS = [
  'signature',
  'instruction_index',
  'slot',
  'block_time',
  'date',
  'hour',
  'day_of_week',
  'program_id',
  'protocol_name',
  'instruction_type',
  'fee',
  'compute_units',
  'accounts_count',
  'success',
  'accounts',
  'error_message',
  'log_messages',
  'raw_data',
] as const;

export const SPLIT_NAMES = ['train', 'test', 'val'] as const;
export type SplitName = (typeof SPLIT_NAMES)[number];
export type Splits = Record<SplitName, number>;

/** How far the split fractions may be from summing to 1 (floating-point input). */
export const SPLIT_SUM_TOLERANCE = 1e-9;
/** Seeds are 32-bit unsigned integers (cityHash64's seed argument, and exact in every JSON). */
export const MAX_SEED = 2 ** 32 - 1;

export const SAMPLING_STRATEGIES = ['RANDOM', 'STRATIFIED'] as const;
/** Columns a STRATIFIED sample may keep the shares of: categories, never free text or numbers. */
export const STRATUM_COLUMNS = ['protocol_name', 'program_id', 'instruction_type', 'success', 'hour', 'day_of_week'] as const;
export type StratumColumn = (typeof STRATUM_COLUMNS)[number];

export interface Sampling {
  strategy: (typeof SAMPLING_STRATEGIES)[number];
  /** Share kept, 0-1: of transactions (RANDOM), of each stratum's rows (STRATIFIED). */
  rate: number;
  seed: number;
  /** STRATIFIED only: the column whose values are the strata (default protocol_name). */
  stratifyBy?: StratumColumn;
}

/** Numeric columns `preprocessing.normalize` may rescale, and how. */
export const NORMALIZE_COLUMNS = ['fee', 'compute_units', 'accounts_count'] as const;
export const NORMALIZE_METHODS = ['Z_SCORE', 'MIN_MAX'] as const;
export type NormalizeMethod = (typeof NORMALIZE_METHODS)[number];
/** Low-cardinality columns `preprocessing.oneHotEncode` may turn into indicator columns. */
export const ONE_HOT_COLUMNS = ['protocol_name', 'instruction_type', 'program_id'] as const;

/** Transforms of a training set, computed by the engine while it writes (preprocessing.ts). */
export interface Preprocessing {
  normalize: string[];
  normalizeMethod: NormalizeMethod;
  oneHotEncode: string[];
}

/** The part of a job's spec both kinds share: the file format and how rows are split and sampled. */
export interface OutputSpec {
  format: ExportFormat;
  /** null: every transaction is kept. */
  sampling: Sampling | null;
  splits: Splits;
  /** Seed of the split hash. */
  seed: number;
}

/** An export of `transactions` by filters (GraphQL exportDataset). */
export interface FilterExportSpec extends OutputSpec {
  kind: 'filters';
  filters: {
    /** null: every protocol the caller may see. */
    protocols: string[] | null;
    /** Inclusive UTC days; null: all time. */
    dateRange: { start: string | null; end: string | null } | null;
  };
  columns: string[];
  /** null (or absent, in jobs written before it existed): the columns as stored. */
  preprocessing?: Preprocessing | null;
}

/** An export of a sandboxed SQL SELECT (POST /v1/query/exports). */
export interface SqlExportSpec extends OutputSpec {
  kind: 'sql';
  query: string;
}

export type ExportSpec = FilterExportSpec | SqlExportSpec;

/** A 400 naming the part at fault; a message starting with "." names a field inside it (`splits.train`). */
const bad = (key: ExportParamKey, message: string, index?: number): AppError =>
  new AppError(Errors.invalidParams, `${param(key, index)}${message.startsWith('.') ? '' : ' '}${message}`, { field: key });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function onlyKeys(v: Record<string, unknown>, allowed: readonly string[], key: ExportParamKey): void {
  for (const k of Object.keys(v)) if (!allowed.includes(k)) throw bad(key, `has no field "${k.slice(0, 50)}"; fields: ${allowed.join(', ')}`);
}

function seedOf(v: unknown, key: ExportParamKey): number {
  if (v === undefined || v === null) return randomInt(0, MAX_SEED);
  if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > MAX_SEED) throw bad(key, `must be a whole number from 0 to ${MAX_SEED}`);
  return v as number;
}

function formatOf(v: unknown): ExportFormat {
  const f = typeof v === 'string' ? v.toUpperCase() : v;
  if (v === undefined || v === null) return 'PARQUET';
  if (typeof f !== 'string' || !(EXPORT_FORMATS as readonly string[]).includes(f)) {
    throw bad('format', `must be one of ${EXPORT_FORMATS.join(', ')}${typeof v === 'string' ? `, got "${v.slice(0, 40)}"` : ''}`);
  }
  return f as ExportFormat;
}

function samplingOf(v: unknown): Sampling | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw bad('sampling', 'must be an object {strategy: RANDOM or STRATIFIED, rate, seed?, stratifyBy?}');
  onlyKeys(v, ['strategy', 'rate', 'seed', 'stratifyBy'], 'sampling');
  const strategy = v.strategy === undefined ? 'RANDOM' : typeof v.strategy === 'string' ? v.strategy.toUpperCase() : v.strategy;
  if (!(SAMPLING_STRATEGIES as readonly unknown[]).includes(strategy)) throw bad('sampling.strategy', `must be one of ${SAMPLING_STRATEGIES.join(', ')}`);
  if (typeof v.rate !== 'number' || !Number.isFinite(v.rate) || v.rate < 0 || v.rate > 1) {
    throw bad('sampling.rate', 'must be a number from 0 to 1 (the share of transactions kept)');
  }
  const seed = seedOf(v.seed, 'sampling.seed');
  if (strategy === 'RANDOM') {
    if (v.stratifyBy !== undefined && v.stratifyBy !== null) throw bad('sampling.stratifyBy', 'is for strategy STRATIFIED');
    return { strategy: 'RANDOM', rate: v.rate, seed };
  }
  const by = v.stratifyBy ?? 'protocol_name';
  if (typeof by !== 'string' || !(STRATUM_COLUMNS as readonly string[]).includes(by)) {
    throw bad('sampling.stratifyBy', `must be one of ${STRATUM_COLUMNS.join(', ')}${typeof by === 'string' ? `, got "${by.slice(0, 40)}"` : ''}`);
  }
  return { strategy: 'STRATIFIED', rate: v.rate, seed, stratifyBy: by as StratumColumn };
}

/** A list of distinct column names drawn from `allowed` and written in the export (`columns`). */
function columnList(v: unknown, key: ExportParamKey, allowed: readonly string[], columns: readonly string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(key, `must be a list of column names from ${allowed.join(', ')}`);
  const out: string[] = [];
  v.forEach((c, i) => {
    if (typeof c !== 'string' || !allowed.includes(c)) {
      throw bad(key, `${typeof c === 'string' ? `"${c.slice(0, 60)}"` : 'is not a string:'} cannot be used here; columns: ${allowed.join(', ')}`, i);
    }
    if (!columns.includes(c)) throw bad(key, `"${c}" is not among the exported columns; add it to columns`, i);
    if (out.includes(c)) throw bad(key, `"${c}" is listed twice`, i);
    out.push(c);
  });
  return out;
}

function preprocessingOf(v: unknown, columns: readonly string[]): Preprocessing | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw bad('preprocessing', 'must be an object {normalize, normalizeMethod, oneHotEncode}');
  onlyKeys(v, ['normalize', 'normalizeMethod', 'oneHotEncode'], 'preprocessing');
  const m =
    v.normalizeMethod === undefined || v.normalizeMethod === null
      ? 'Z_SCORE'
      : typeof v.normalizeMethod === 'string'
        ? v.normalizeMethod.toUpperCase()
        : v.normalizeMethod;
  if (!(NORMALIZE_METHODS as readonly unknown[]).includes(m)) throw bad('preprocessing.normalizeMethod', `must be one of ${NORMALIZE_METHODS.join(', ')}`);
  const normalize = columnList(v.normalize, 'preprocessing.normalize', NORMALIZE_COLUMNS, columns);
  const oneHotEncode = columnList(v.oneHotEncode, 'preprocessing.oneHotEncode', ONE_HOT_COLUMNS, columns);
  if (normalize.length === 0 && oneHotEncode.length === 0) return null;
  return { normalize, normalizeMethod: m as NormalizeMethod, oneHotEncode };
}

function splitsOf(v: unknown): Splits {
  if (v === undefined || v === null) return { train: 1, test: 0, val: 0 };
  if (!isObject(v)) throw bad('splits', 'must be an object {train, test, val} of fractions summing to 1');
  onlyKeys(v, SPLIT_NAMES, 'splits');
  const out = { train: 0, test: 0, val: 0 };
  for (const name of SPLIT_NAMES) {
    const x = v[name];
    if (x === undefined || x === null) continue;
    if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x > 1) throw bad('splits', `.${name} must be a number from 0 to 1`);
    out[name] = x;
  }
  const sum = out.train + out.test + out.val;
  if (Math.abs(sum - 1) > SPLIT_SUM_TOLERANCE) throw bad('splits', `must sum to 1 (train + test + val = ${sum})`);
  return out;
}

/** A day's name in a refusal: the range's own name leads (`.end` alone reads only after `.start`). */
const dayName = (field: string): string => (field.startsWith('.') ? `${param('filters.dateRange')}${field}` : field);

/** A day of the range as given: text (its calendar is checked by daySpan), or null when absent. */
function dayOf(v: unknown, which: 'start' | 'end'): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw bad('filters.dateRange', `.${which} must be a date YYYY-MM-DD`);
  return v;
}

/** The export's names of a range's days, in the core's placeholders (each door words them), and its words for a refused day. */
export const EXPORT_DAYS: DayNames = {
  from: `${param('filters.dateRange')}.start`,
  to: '.end',
  field: 'filters.dateRange',
  words: {
    notADay: (field) => `${dayName(field)} must be a date YYYY-MM-DD`,
    outOfRange: (field) => `${dayName(field)} must be from ${MIN_BLOCK_DATE} to ${MAX_BLOCK_DATE}`,
  },
};

function outputOf(v: Record<string, unknown>): OutputSpec {
  return { format: formatOf(v.format), sampling: samplingOf(v.sampling), splits: splitsOf(v.splits), seed: seedOf(v.seed, 'seed') };
}

/**
 * The filter export a client asked for, or a 400 naming the part at fault. `visible` is the
 * protocols the caller may see (inactive ones are hidden on every interface).
 */
export function filterExportSpec(input: unknown, visible: readonly string[]): FilterExportSpec {
  if (!isObject(input))
    throw new AppError(Errors.invalidParams, 'the export configuration must be a JSON object {format, filters, columns, sampling, splits, seed}');
  for (const k of Object.keys(input)) {
    if (!['format', 'filters', 'columns', 'sampling', 'splits', 'seed', 'preprocessing'].includes(k)) {
      throw new AppError(
        Errors.invalidParams,
        `the export configuration has no field "${k.slice(0, 50)}"; fields: format, filters, columns, sampling, splits, seed, preprocessing`,
      );
    }
  }
  const output = outputOf(input);
  let protocols: string[] | null = null;
  let dateRange: FilterExportSpec['filters']['dateRange'] = null;
  const f = input.filters;
  if (f !== undefined && f !== null) {
    if (!isObject(f)) throw bad('filters', 'must be an object {protocols, dateRange}');
    onlyKeys(f, ['protocols', 'dateRange'], 'filters');
    if (f.protocols !== undefined && f.protocols !== null) {
      if (!Array.isArray(f.protocols)) throw bad('filters.protocols', 'must be a list of protocol names');
      if (f.protocols.length === 0) throw bad('filters.protocols', 'is empty; leave it out to export every protocol, or name at least one');
      protocols = [];
      f.protocols.forEach((p, i) => {
        if (typeof p !== 'string' || !visible.includes(p)) {
          throw bad(
            'filters.protocols',
            `${typeof p === 'string' ? `"${p.slice(0, 60)}"` : 'is not a string:'} is not an available protocol; available: ${visible.join(', ')}`,
            i,
          );
        }
        if (!protocols!.includes(p)) protocols!.push(p);
      });
      protocols.sort();
    }
    if (f.dateRange !== undefined && f.dateRange !== null) {
      if (!isObject(f.dateRange)) throw bad('filters.dateRange', 'must be an object {start, end} of dates YYYY-MM-DD');
      onlyKeys(f.dateRange, ['start', 'end'], 'filters.dateRange');
      const start = dayOf(f.dateRange.start, 'start');
      const end = dayOf(f.dateRange.end, 'end');
      // Real calendar days the store can hold, in order: the one day-range check.
      daySpan(start, end, EXPORT_DAYS);
      if (start !== null || end !== null) dateRange = { start, end };
    }
  }
  let columns: string[] = [...EXPORT_COLUMNS];
  if (input.columns !== undefined && input.columns !== null) {
    if (!Array.isArray(input.columns) || input.columns.length === 0) throw bad('columns', 'must be a non-empty list of column names');
    columns = [];
    input.columns.forEach((c, i) => {
      if (typeof c !== 'string' || !(EXPORT_COLUMNS as readonly string[]).includes(c)) {
        throw bad(
          'columns',
          `${typeof c === 'string' ? `"${c.slice(0, 60)}"` : 'is not a string:'} is not an exportable column; columns: ${EXPORT_COLUMNS.join(', ')}`,
          i,
        );
      }
      if (columns.includes(c)) throw bad('columns', `"${c}" is listed twice`, i);
      columns.push(c);
    });
  }
  return { kind: 'filters', ...output, filters: { protocols, dateRange }, columns, preprocessing: preprocessingOf(input.preprocessing, columns) };
}

/** The SQL export a client asked for (the query itself is judged by the SQL sandbox). */
export function sqlExportSpec(input: unknown): SqlExportSpec {
  if (!isObject(input)) throw new AppError(Errors.invalidParams, 'the body must be a JSON object {query, format, sampling, splits, seed}');
  for (const k of Object.keys(input)) {
    if (!['query', 'format', 'sampling', 'splits', 'seed'].includes(k)) {
      throw new AppError(Errors.invalidParams, `the body has no field "${k.slice(0, 50)}"; fields: query, format, sampling, splits, seed`);
    }
  }
  if (typeof input.query !== 'string' || input.query.trim() === '') throw bad('query', 'must be a non-empty string');
  const output = outputOf(input);
  // Strata are columns of transactions; a query's result has columns of its own.
  if (output.sampling?.strategy === 'STRATIFIED')
    throw bad('sampling.strategy', 'STRATIFIED is offered for exports by filters (POST /v1/exports, exportDataset); a SQL export samples RANDOM');
  return { kind: 'sql', ...output, query: input.query };
}

/** Splits that receive rows, in file-name order. */
export const activeSplits = (s: Splits): SplitName[] => SPLIT_NAMES.filter((n) => s[n] > 0);
