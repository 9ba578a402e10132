// The vocabulary of an export job (formats, columns, splits, sampling, preprocessing) and
// the spec a job is run from. Its request is declared and checked in export-request.ts.
import type { SecondsRange } from '../../../core/request-check.ts';

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
    /** Inclusive UTC days as asked (the dataset card states them); null: all time. */
    dateRange: { start: string | null; end: string | null } | null;
    /** Those days as block-time seconds, converted once by the check (absent in jobs written before it). */
    range?: SecondsRange;
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

/** Splits that receive rows, in file-name order. */
export const activeSplits = (s: Splits): SplitName[] => SPLIT_NAMES.filter((n) => s[n] > 0);
