// The request of an export job, declared once (core/request-check.ts `request`): the body of
// a filter export (REST POST /v1/exports, GraphQL exportDataset(config)) and of a SQL export
// (POST /v1/query/exports), each one TypeBox schema whose fields carry their own refusal
// words (`x-refusal`), its protocol scope (the filter's protocols: a list, each active) and
// its cross-field rules. The one check (checkRequest) runs them and converts the days; this
// module then completes the checked request into a job's spec (defaults, seeds drawn). The
// REST schemas (export-schemas.ts) and GraphQL's input types (api/doors/graphql/export-plans.ts)
// are derived from these declarations. Errors name the field by its logical key
// (core/errors.ts `param()`), which each door words (`columns[1]`, `config.columns[1]`).
import { randomInt } from 'node:crypto';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { AppError, Errors, param, type ExportParamKey } from '../../../core/errors.ts';
import { MAX_BLOCK_DATE, MIN_BLOCK_DATE } from '../../../core/limits/questions.ts';
import { MAX_SEED } from '../../../core/limits/exports.ts';
import { checkRequest, request, type CheckedRequest, type DayNames, type RequestDecl } from '../../../core/request-check.ts';
import { notValue, onlyWith, orderedFields, ranBy, subsetOf, sumEquals } from '../../../core/request-rules.ts';
import { ActiveProtocolName, CALENDAR_DAY_PATTERN, DOUBLE, INT64 } from '../../../core/vocabulary/primitives.ts';
import { sqlQuery } from '../sql/query-request.ts';
import { SQL_EXPORT_EXAMPLES, SQL_EXPORT_LANGUAGE_RULE } from '../sql/sql-text.ts';
import {
  EXPORT_COLUMNS,
  EXPORT_FORMATS,
  NORMALIZE_COLUMNS,
  NORMALIZE_METHODS,
  ONE_HOT_COLUMNS,
  SAMPLING_STRATEGIES,
  SPLIT_NAMES,
  SPLIT_SUM_TOLERANCE,
  STRATUM_COLUMNS,
  type ExportFormat,
  type FilterExportSpec,
  type NormalizeMethod,
  type OutputSpec,
  type Preprocessing,
  type Sampling,
  type SqlExportSpec,
  type StratumColumn,
} from './export-config.ts';

/** A value read in any case ("csv" is CSV): a pattern over the values, which GraphQL shows as the enum `title`. */
const caseless = (title: string, values: readonly string[], options: Record<string, unknown>) =>
  Type.Unsafe<string>({
    ...options,
    type: 'string',
    title,
    'x-enum': [...values],
    pattern: `^(?:${values.map((v) => [...v].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('')).join('|')})$`,
    'x-refusal': { type: `must be one of ${values.join(', ')}`, pattern: `must be one of ${values.join(', ')}, got {value}` },
  });
/** One of `values`, exactly: an enum named `title` in every document. */
const named = (title: string, values: readonly string[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<string>({ ...options, type: 'string', enum: [...values], title });
/** A list of distinct names from `allowed`, each refused in these words. */
const names = (title: string, allowed: readonly string[], refused: string) =>
  Type.Array(
    Type.Unsafe<string>({ type: 'string', enum: [...allowed], title, 'x-refusal': { type: `is not a string; ${refused}`, enum: `{value} ${refused}` } }),
    {
      uniqueItems: true,
    },
  );
const seed = (description: string) =>
  Type.Integer({ format: INT64, minimum: 0, maximum: MAX_SEED, description, 'x-refusal': `must be a whole number from 0 to ${MAX_SEED}` });
const fraction = (refusal: string, options: Record<string, unknown> = {}) =>
  Type.Number({ ...options, format: DOUBLE, minimum: 0, maximum: 1, 'x-refusal': refusal });
/** An object of these fields only; `shape` words what it must be. */
const fieldsOnly = <P extends Record<string, TSchema>>(title: string, properties: P, shape: string, options: Record<string, unknown> = {}) =>
  Type.Object(properties, {
    ...options,
    title,
    additionalProperties: false,
    'x-refusal': {
      type: `must be an object ${shape}`,
      additionalProperties: `has no field "{name}"; fields: ${Object.keys(properties).join(', ')}`,
      ...(options['x-refusal'] as object | undefined),
    },
  });
/** A day the store can hold (daySpan checks its calendar first, in its own words; the schema refuses other shapes). */
const day = (description: string) =>
  Type.String({
    pattern: CALENDAR_DAY_PATTERN,
    description: `${description}, ${MIN_BLOCK_DATE} to ${MAX_BLOCK_DATE}`,
    'x-refusal': 'must be a date YYYY-MM-DD',
  });

const Format = caseless('ExportFormat', EXPORT_FORMATS, { default: 'PARQUET', description: `${EXPORT_FORMATS.join(', ')} (any case)` });
const split = fraction('must be a number from 0 to 1');
const Splits = fieldsOnly(
  'Splits',
  { train: Type.Optional(split), test: Type.Optional(split), val: Type.Optional(split) },
  '{train, test, val} of fractions summing to 1',
  { description: `Fractions summing to 1 (within ${SPLIT_SUM_TOLERANCE}; an absent one is 0), drawn by a hash of the signature (default: all train)` },
);
/** Sampling of a filter export (RANDOM or STRATIFIED by a column) or of a SQL export (RANDOM: a query's result has no strata). */
const sampling = (stratified: boolean) =>
  fieldsOnly(
    stratified ? 'Sampling' : 'SqlSampling',
    {
      strategy: Type.Optional(
        named('SamplingStrategy', SAMPLING_STRATEGIES, {
          default: 'RANDOM',
          description:
            'RANDOM: each transaction kept with probability rate. STRATIFIED (filter exports): each stratum keeps floor(rate * rows + 0.5) of its rows',
        }),
      ),
      rate: fraction('must be a number from 0 to 1 (the share of transactions kept)', {
        description: "Share kept, 0-1: of transactions (RANDOM), of each stratum's rows (STRATIFIED)",
      }),
      seed: Type.Optional(seed('Sampling seed, 0-4294967295; drawn and reported when absent')),
      ...(stratified
        ? {
            stratifyBy: Type.Optional(
              // Its default applies under STRATIFIED only: documented, not filled in by the check (onlyWith refuses it under RANDOM).
              named('StratumColumn', STRATUM_COLUMNS, {
                'x-doc-default': 'protocol_name',
                description: 'STRATIFIED only: the column whose values are the strata',
              }),
            ),
          }
        : {}),
    },
    `{strategy: ${stratified ? 'RANDOM or STRATIFIED' : 'RANDOM'}, rate, seed?${stratified ? ', stratifyBy?' : ''}}`,
    { 'x-refusal': { required: 'must be a number from 0 to 1 (the share of transactions kept)' } },
  );

const Filters = fieldsOnly(
  'ExportFilters',
  {
    protocols: Type.Optional(
      Type.Array(ActiveProtocolName, {
        minItems: 1,
        description: 'Active protocol names (GET /api/v1/stats lists them)',
        'x-refusal': { type: 'must be a list of protocol names', minItems: 'is empty; leave it out to export every protocol, or name at least one' },
      }),
    ),
    dateRange: Type.Optional(
      fieldsOnly(
        'ExportDateRange',
        { start: Type.Optional(day('First day, YYYY-MM-DD')), end: Type.Optional(day('Last day, YYYY-MM-DD')) },
        '{start, end} of dates YYYY-MM-DD',
        {
          description: 'Inclusive UTC days; start not after end',
        },
      ),
    ),
  },
  '{protocols, dateRange}',
  { description: 'protocols and dateRange; the other filters of the queries are refused for exports' },
);
const PreprocessingBody = fieldsOnly(
  'Preprocessing',
  {
    normalize: Type.Optional(names('NormalizeColumn', NORMALIZE_COLUMNS, `cannot be used here; columns: ${NORMALIZE_COLUMNS.join(', ')}`)),
    normalizeMethod: Type.Optional(
      caseless('NormalizeMethod', NORMALIZE_METHODS, {
        default: 'Z_SCORE',
        description: `${NORMALIZE_METHODS.join(' or ')} (any case); fitted on the train split`,
      }),
    ),
    oneHotEncode: Type.Optional(names('OneHotColumn', ONE_HOT_COLUMNS, `cannot be used here; columns: ${ONE_HOT_COLUMNS.join(', ')}`)),
  },
  '{normalize, normalizeMethod, oneHotEncode}',
  { description: 'Training-set transforms computed by the engine while writing, stated in the dataset card (docs/exports.md); each column must be exported' },
);
const Columns = Type.Array(
  Type.Unsafe<string>({
    type: 'string',
    enum: [...EXPORT_COLUMNS],
    title: 'ExportColumn',
    'x-refusal': { type: 'is not a string; columns must be names', enum: `{value} is not an exportable column; columns: ${EXPORT_COLUMNS.join(', ')}` },
  }),
  {
    minItems: 1,
    uniqueItems: true,
    description: 'Columns to write, each once (default: every exportable column; docs/exports.md lists them)',
    'x-refusal': { type: 'must be a non-empty list of column names', minItems: 'must be a non-empty list of column names' },
  },
);

/** The output fields both kinds of export take. */
const output = {
  format: Type.Optional(Format),
  splits: Type.Optional(Splits),
  seed: Type.Optional(seed('Split seed, 0-4294967295; drawn and reported when absent')),
};
const SPLITS_SUM_TO_ONE = sumEquals('splits', SPLIT_NAMES, 1, SPLIT_SUM_TOLERANCE);

/** The export's names of a range's days, in the core's placeholders (each door words them), and its words for a refused day. */
const dayName = (field: string): string => (field.startsWith('.') ? `${param('filters.dateRange')}${field}` : field);
export const EXPORT_DAYS: DayNames = {
  from: `${param('filters.dateRange')}.start`,
  to: '.end',
  field: 'filters.dateRange',
  words: {
    notADay: (field) => `${dayName(field)} must be a date YYYY-MM-DD`,
    outOfRange: (field) => `${dayName(field)} must be from ${MIN_BLOCK_DATE} to ${MAX_BLOCK_DATE}`,
  },
};

/** The body of an export by filters. */
export const FILTER_EXPORT = request(
  Type.Object(
    {
      ...output,
      sampling: Type.Optional(sampling(true)),
      filters: Type.Optional(Filters),
      columns: Type.Optional(Columns),
      preprocessing: Type.Optional(PreprocessingBody),
    },
    {
      title: 'ExportConfig',
      additionalProperties: false,
      'x-refusal': {
        type: 'must be a JSON object {format, filters, columns, sampling, splits, seed, preprocessing}',
        additionalProperties: 'has no field "{name}"; fields: format, filters, columns, sampling, splits, seed, preprocessing',
      },
    },
  ),
  'list',
  [
    SPLITS_SUM_TO_ONE,
    orderedFields('filters.dateRange.start', 'filters.dateRange.end'),
    subsetOf(['preprocessing.normalize', 'preprocessing.oneHotEncode'], 'columns', EXPORT_COLUMNS, 'the exported columns'),
    onlyWith('sampling.stratifyBy', 'sampling.strategy', 'STRATIFIED', 'RANDOM'),
  ],
  { protocols: 'filters.protocols', days: { at: 'filters.dateRange', from: 'start', to: 'end', names: EXPORT_DAYS } },
);

/** The body of an export of a SQL SELECT (the query itself is judged by the SQL guard). */
export const SQL_EXPORT = request(
  Type.Object(
    {
      query: sqlQuery(
        'One read-only SELECT, as for POST /v1/query; no LIMIT is added. With sampling or splits, its result needs a signature column',
        SQL_EXPORT_EXAMPLES,
      ),
      ...output,
      sampling: Type.Optional(sampling(false)),
    },
    {
      additionalProperties: false,
      'x-refusal': {
        type: 'must be a JSON object {query, format, sampling, splits, seed}',
        additionalProperties: 'has no field "{name}"; fields: query, format, sampling, splits, seed',
        required: 'must be a non-empty string',
      },
    },
  ),
  'narrow',
  [
    SPLITS_SUM_TO_ONE,
    // Strata are columns of transactions; a query's result has columns of its own.
    notValue('sampling.strategy', 'STRATIFIED', 'is offered for exports by filters (POST /v1/exports, exportDataset); a SQL export samples RANDOM'),
    ranBy(SQL_EXPORT_LANGUAGE_RULE),
  ],
);

const KEYS: readonly ExportParamKey[] = [
  'filters.protocols',
  'filters.dateRange',
  'filters',
  'preprocessing.normalizeMethod',
  'preprocessing.normalize',
  'preprocessing.oneHotEncode',
  'preprocessing',
  'sampling.strategy',
  'sampling.rate',
  'sampling.seed',
  'sampling.stratifyBy',
  'sampling',
  'columns',
  'format',
  'splits',
  'seed',
  'query',
];

/**
 * A body's path (`columns.1`, `splits.train`) as the doors word it: its logical key as a
 * placeholder, an item's index on it (`⟨columns[1]⟩`), the rest as written (`⟨splits⟩.train`).
 */
export function exportFieldName(path: string, body: string): string {
  if (path === '') return body;
  const key = KEYS.find((k) => path === k || path.startsWith(`${k}.`));
  if (key === undefined) return path;
  const rest = path.slice(key.length + 1);
  return /^\d+$/.test(rest) ? param(key, Number(rest)) : `${param(key)}${rest === '' ? '' : `.${rest}`}`;
}

/** Null is "absent" in an export body (GraphQL input objects send null for fields given as null). */
export function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => [k, withoutNulls(x)]),
  );
}

/** The one check of a body: a non-object is refused in the root's own words, before its fields are read. */
function checked<S extends TObject>(decl: RequestDecl<S>, body: unknown, visible: readonly string[], called: string): CheckedRequest<S> {
  const values = withoutNulls(body);
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new AppError(Errors.invalidParams, `${called} ${(decl.schema['x-refusal'] as Record<string, string>).type}`);
  }
  return checkRequest(decl, { values: values as Record<string, unknown> }, visible, (path) => exportFieldName(path, called));
}

type OutputValues = {
  format?: string;
  seed?: number;
  splits?: Record<string, number>;
  sampling?: { strategy?: string; rate: number; seed?: number; stratifyBy?: string };
};

/** The output of a checked body: any-case names upper-cased, absent seeds drawn, absent splits all train. */
function outputOf(v: OutputValues): OutputSpec {
  const s = v.sampling;
  const sampling: Sampling | null =
    s === undefined
      ? null
      : s.strategy === 'STRATIFIED'
        ? { strategy: 'STRATIFIED', rate: s.rate, seed: s.seed ?? randomInt(0, MAX_SEED), stratifyBy: (s.stratifyBy ?? 'protocol_name') as StratumColumn }
        : { strategy: 'RANDOM', rate: s.rate, seed: s.seed ?? randomInt(0, MAX_SEED) };
  const splits = v.splits === undefined ? { train: 1, test: 0, val: 0 } : { train: 0, test: 0, val: 0, ...v.splits };
  return { format: (v.format ?? 'PARQUET').toUpperCase() as ExportFormat, sampling, splits, seed: v.seed ?? randomInt(0, MAX_SEED) };
}

function preprocessingOf(p: { normalize?: string[]; normalizeMethod?: string; oneHotEncode?: string[] } | undefined): Preprocessing | null {
  const normalize = p?.normalize ?? [];
  const oneHotEncode = p?.oneHotEncode ?? [];
  if (normalize.length === 0 && oneHotEncode.length === 0) return null;
  return { normalize, normalizeMethod: (p?.normalizeMethod ?? 'Z_SCORE').toUpperCase() as NormalizeMethod, oneHotEncode };
}

/**
 * The filter export a client asked for, checked once, or a 400 naming the part at fault.
 * `visible` is the protocols the caller may see (inactive ones are hidden on every door).
 */
export function filterExportSpec(body: unknown, visible: readonly string[]): FilterExportSpec {
  const c = checked(FILTER_EXPORT, body, visible, 'the export configuration');
  const start = c.filters?.dateRange?.start;
  const end = c.filters?.dateRange?.end;
  return {
    kind: 'filters',
    ...outputOf(c as OutputValues),
    filters: {
      protocols: c.filters?.protocols === undefined ? null : [...c.protocols].sort(),
      dateRange: start === undefined && end === undefined ? null : { start: start ?? null, end: end ?? null },
      range: c.range,
    },
    columns: c.columns ?? [...EXPORT_COLUMNS],
    preprocessing: preprocessingOf(c.preprocessing),
  };
}

/** The SQL export a client asked for (the query itself is judged by the SQL sandbox). */
export function sqlExportSpec(body: unknown): SqlExportSpec {
  const c = checked(SQL_EXPORT, body, [], 'the body');
  return { kind: 'sql', ...outputOf(c as OutputValues), query: c.query };
}
