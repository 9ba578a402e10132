// Training-set transforms a filter export applies while the engine writes (config.preprocessing):
//
// - normalize: each named numeric column rescaled, Z_SCORE ((x - mean) / std, the population
//   standard deviation) or MIN_MAX ((x - min) / (max - min)). The parameters are fitted on the
//   train split's rows only (on every row when no train split is asked for), so the test and
//   val rows are scaled as unseen data would be when the model is served; a constant column
//   (std 0, max = min) becomes 0. Written as Float64 in place of the column.
// - oneHotEncode: each named low-cardinality column replaced by one UInt8 indicator column per
//   value present in the export (every split), named `<column>_<value>` (characters other than
//   letters, digits and _ become _), in the engine's order of the values.
//
// Both are fitted once, when the job is planned (one pass over the export's rows), and kept
// in the plan (JobWork.fitted): every chunk, and a resumed job, uses the same parameters. The
// manifest and the dataset card state them so a model can be served with the same transform.
import { EXPORT_ONE_HOT_MAX_CATEGORIES, EXPORT_ONE_HOT_NAME_MAX_CHARS } from '../../../core/limits/exports.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { activeSplits, type FilterExportSpec, type NormalizeMethod } from './export-config.ts';
import { floatLiteral, literal, splitExpression } from './export-sql.ts';
import { JobFailure } from './job-errors.ts';

export interface FittedNormalize {
  column: string;
  /** Rows the parameters were computed on. */
  rows: number;
  /** null when there was no row to fit on (then the column is written as stored, as Float64). */
  mean: number | null;
  std: number | null;
  min: number | null;
  max: number | null;
}

export interface FittedOneHot {
  column: string;
  /** The values, and the indicator column of each, in the same order. */
  categories: string[];
  names: string[];
}

export interface FittedPreprocessing {
  method: NormalizeMethod;
  /** Which rows the normalisation parameters come from. */
  fittedOn: 'train' | 'all';
  normalize: FittedNormalize[];
  oneHot: FittedOneHot[];
}

type Row = Record<string, string | number | null | string[]>;
const num = (v: unknown): number | null => (v === null || v === undefined || Number.isNaN(Number(v)) ? null : Number(v));

/** Fit the transforms over the rows `where` selects (filters and sample); null when none is asked for. */
export async function fitPreprocessing(wh: Warehouse, spec: FilterExportSpec, where: string, settings: Settings): Promise<FittedPreprocessing | null> {
  const p = spec.preprocessing ?? null;
  if (p === null) return null;
  const splits = activeSplits(spec.splits);
  const fittedOn = splits.includes('train') && splits.length > 1 ? 'train' : 'all';
  const fit = fittedOn === 'train' ? `(${splitExpression(spec.splits, spec.seed)} = 'train')` : '1';
  const parts: string[] = [`countIf(${fit}) AS fit_rows`];
  p.normalize.forEach((c, i) => {
    const x = `toFloat64(${c})`;
    parts.push(
      `avgIf(${x}, ${fit}) AS mean_${i}`,
      `stddevPopStableIf(${x}, ${fit}) AS std_${i}`,
      `minIf(${x}, ${fit}) AS min_${i}`,
      `maxIf(${x}, ${fit}) AS max_${i}`,
    );
  });
  // One more than the cap: a column over it is refused, never cut.
  p.oneHotEncode.forEach((c, i) => {
    parts.push(`arraySort(groupUniqArray(${EXPORT_ONE_HOT_MAX_CATEGORIES + 1})(toString(${c}))) AS cat_${i}`);
  });
  const [r = {}] = await wh.query<Row>(`SELECT ${parts.join(', ')} FROM ${TABLES.transactions} WHERE ${where}`, { settings });
  const rows = Number(r.fit_rows ?? 0);
  const taken = new Set(spec.columns);
  return {
    method: p.normalizeMethod,
    fittedOn,
    normalize: p.normalize.map((column, i) =>
      rows === 0
        ? { column, rows, mean: null, std: null, min: null, max: null }
        : { column, rows, mean: num(r[`mean_${i}`]), std: num(r[`std_${i}`]), min: num(r[`min_${i}`]), max: num(r[`max_${i}`]) },
    ),
    oneHot: p.oneHotEncode.map((column, i) => {
      const categories = (r[`cat_${i}`] as string[] | undefined) ?? [];
      if (categories.length > EXPORT_ONE_HOT_MAX_CATEGORIES) {
        throw new JobFailure(
          `preprocessing.oneHotEncode: ${column} has more than ${EXPORT_ONE_HOT_MAX_CATEGORIES} distinct values in this export, one column each; ` +
            'one-hot encoding is for low-cardinality columns: narrow the filters or leave it out',
        );
      }
      taken.delete(column);
      return { column, categories, names: categories.map((v) => indicatorName(column, v, taken)) };
    }),
  };
}

/** `<column>_<value>` in letters, digits and _, unique among the export's columns. */
function indicatorName(column: string, value: string, taken: Set<string>): string {
  const base = `${column}_${value.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, EXPORT_ONE_HOT_NAME_MAX_CHARS);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, EXPORT_ONE_HOT_NAME_MAX_CHARS - String(n).length - 1)}_${n}`;
  taken.add(name);
  return name;
}

/**
 * The SELECT expressions that write `column` under the fitted transforms, or null when it is
 * written as stored. Indicator names are letters, digits and _ only (indicatorName).
 */
export function preprocessedColumn(column: string, fitted: FittedPreprocessing | null | undefined): string[] | null {
  if (fitted == null) return null;
  const hot = fitted.oneHot.find((o) => o.column === column);
  // No value to encode (an export of 0 rows): the column as stored, so the files keep their columns.
  if (hot !== undefined) return hot.categories.length === 0 ? null : hot.categories.map((v, i) => `toUInt8(${column} = ${literal(v)}) AS \`${hot.names[i]}\``);
  const n = fitted.normalize.find((o) => o.column === column);
  if (n === undefined) return null;
  const x = `toFloat64(${column})`;
  if (n.mean === null || n.std === null || n.min === null || n.max === null) return [`${x} AS ${column}`];
  if (fitted.method === 'Z_SCORE') return [n.std > 0 ? `(${x} - ${floatLiteral(n.mean)}) / ${floatLiteral(n.std)} AS ${column}` : `toFloat64(0) AS ${column}`];
  return [n.max > n.min ? `(${x} - ${floatLiteral(n.min)}) / ${floatLiteral(n.max - n.min)} AS ${column}` : `toFloat64(0) AS ${column}`];
}
