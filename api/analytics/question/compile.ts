// The one compiler: a question (measures by dimensions over filters) becomes one statement
// with bound parameters and the shape its cost is judged by. Whole hours are read from the
// smallest hourly view that keeps every state, dimension and filter the question needs,
// the ragged edges of the range from the base table, merged in one statement; an
// hour-aligned range reads the view alone, without the UNION wrapper (a few ms cheaper).
// Only the view columns the question's measures use are read (each costs ~0.5 ms).
import type { CostShape } from '../cost/analytics-cost.ts';
import type { TimeRange, TxStatus } from '../types.ts';
import { bucketSql, type Granularity } from './granularity.ts';
import {
  addFilter,
  addRanges,
  edgesCondition,
  intervalCondition,
  planRange,
  BASE_SOURCE,
  BASE_TABLE,
  DIMENSIONS,
  isDerived,
  isTimeDimension,
  MEASURES,
  SOURCES,
  STATES,
  STATUS_SQL,
  type Bounds,
  type Conditions,
  type Dimension,
  type Measures,
  type MeasureType,
  type RangeFilter,
  type Source,
  type SourceFilter,
  type State,
  type Statement,
} from './model.ts';

export interface QuestionFilters {
  /** The protocols to read, already resolved to visible ones; none means nothing matches. */
  protocols: readonly string[];
  range: TimeRange;
  instructionTypes?: readonly string[];
  /** Case-insensitive substring of the error message (failed records only). */
  errorPattern?: string;
  /** Only succeeded or only failed records; every record when absent or 'all' (statusFromRecords says where it is read). */
  status?: TxStatus;
  /** Only these (protocol, bucket start) cells of a protocol x time question. */
  cells?: readonly { protocol: string; start: number }[];
  /** Whether the caller named the protocols (else the cost model recommends naming some). */
  protocolsNamed?: boolean;
  // Record-level filters: no view keeps them, so they read the base table (BASE_SOURCE).
  programIds?: readonly string[];
  signatures?: readonly string[];
  /** Inclusive ranges of record columns. */
  ranges?: Partial<Record<RangeFilter, Bounds>>;
  /** Case-insensitive substring of the record's log messages. */
  logMessage?: string;
}

/** A keyset position: the order measure's value and each dimension's, of the last row seen. */
export interface Position {
  value: number;
  keys: readonly (string | number)[];
}

export interface Question<M extends string = string> {
  /** The measures the answer shows. */
  measures: readonly M[];
  dimensions?: readonly Dimension[];
  /** Size of the time dimension's buckets; hour when absent. */
  granularity?: Granularity;
  filters: QuestionFilters;
  /** By a measure (if any), then by the dimensions in the order given; by the dimensions ascending when absent. */
  order?: { measure?: M; direction: 'asc' | 'desc'; dimensions?: 'asc' | 'desc' };
  /** At most `limit` rows, after `after` (which needs one direction for the measure and the dimensions); from it on when `inclusive`. */
  page?: { limit: number; after?: Position; inclusive?: boolean };
}

/** The one statement a question compiles to: costed and run as this same object. */
export interface CompiledStatement extends Statement {
  costShape: CostShape;
}

/** Output column of a measure: prefixed, so it never shadows a state column of the same name. */
export const measureColumn = (m: string): string => `m_${m}`;

const dedupe = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

function measure(catalog: Measures, name: string): Measures[string] {
  const m = catalog[name];
  if (m === undefined) throw new Error(`no measure ${name}`);
  return m;
}

/**
 * The measures a question reads as output columns (aggregates, and a derived one it is
 * ordered by), and the derived ones computed from them after reading, inputs first.
 */
function measurePlan(q: Question, catalog: Measures): { columns: string[]; derived: string[] } {
  const ordered = q.order?.measure;
  const columns: string[] = [];
  const derived: string[] = [];
  const add = (name: string): void => {
    const m = measure(catalog, name);
    if (isDerived(m) && name !== ordered) {
      m.of.forEach(add);
      if (!derived.includes(name)) derived.push(name);
    } else if (!columns.includes(name)) columns.push(name);
  };
  for (const name of [...q.measures, ...(ordered === undefined ? [] : [ordered])]) add(name);
  return { columns, derived };
}

function sqlOf(catalog: Measures, name: string): string {
  const m = measure(catalog, name);
  if (!isDerived(m)) return m.sql;
  const [a, b] = m.of.map((x) => sqlOf(catalog, x));
  return m.op === 'difference' ? `${a} - ${b}` : `${a} / ${b}${m.scale === undefined ? '' : ` * ${m.scale}`}`;
}

function statesOf(catalog: Measures, name: string): State[] {
  const m = measure(catalog, name);
  return isDerived(m) ? m.of.flatMap((x) => statesOf(catalog, x)) : [...m.states];
}

/**
 * Whether `f`'s status filter is read from the records' `success` (the base table): every one
 * but failed-only questions by error message (failedTransactions), which the failure view
 * holds. The failure view could answer some other failed-only questions too (fewer rows
 * read); they read the records as they did when `success` was a filter of its own beside
 * `status`, so merging the two changed no statement: reading the view for them is a change
 * of plan to make and measure on its own.
 */
export function statusFromRecords(f: QuestionFilters, dimensions: readonly Dimension[]): boolean {
  if (f.status === undefined || f.status === 'all') return false;
  return f.status === 'succeeded' || !dimensions.includes('errorMessage');
}

/** The source filters a question needs beyond protocols and range. */
function neededFilters(f: QuestionFilters, dimensions: readonly Dimension[]): SourceFilter[] {
  const given: [SourceFilter, unknown][] = [
    ['instructionTypes', f.instructionTypes],
    ['errorPattern', f.errorPattern],
    ['cells', f.cells],
    ['programs', f.programIds],
    ['signatures', f.signatures],
    ['status', statusFromRecords(f, dimensions) ? f.status : undefined],
    ['logMessage', f.logMessage],
    ['ranges', f.ranges !== undefined && Object.keys(f.ranges).length > 0 ? f.ranges : undefined],
  ];
  return given.filter(([, v]) => v !== undefined).map(([n]) => n);
}

/** The smallest view that keeps every dimension, state and filter asked; else the base table. */
export function chooseSource(dimensions: readonly Dimension[], states: readonly State[], f: QuestionFilters): Source {
  const needs = neededFilters(f, dimensions);
  return (
    SOURCES.find(
      (s) =>
        s.status === (f.status ?? 'all') &&
        dimensions.every((d) => s.dimensions.includes(d)) &&
        states.every((st) => s.states[st] !== undefined) &&
        needs.every((n) => s.filters.includes(n)),
    ) ?? BASE_SOURCE
  );
}

/** What a question reads from: the view alone (direct), or whole hours and edges merged. */
interface Read {
  from: string;
  /** The view is read directly: its conditions go in the outer WHERE, and hours are `hour_start`. */
  direct: boolean;
  where: string[];
}

/**
 * Whole hours from the source view and ragged edges from the base table, each branch with
 * the dimension columns, the hour start `t` (when bucketed in time) and the states; the
 * view alone when no edge is needed and its columns carry the states' names.
 */
function readOf(source: Source, states: readonly State[], dims: readonly Dimension[], f: QuestionFilters, params: Record<string, unknown>): Read | undefined {
  // The base table answers the whole range from records: one "edge" from gte to lte.
  const plan = source.base
    ? {
        view: undefined,
        edges:
          f.range.gte !== undefined && f.range.lte !== undefined && f.range.lte < f.range.gte
            ? []
            : [{ from: f.range.gte, to: f.range.lte === undefined ? undefined : f.range.lte + 1 }],
      }
    : planRange(f.range);
  const shared: Conditions = { where: [], params };
  addFilter(shared, 'protocols', f.protocols);
  addFilter(shared, 'instructionTypes', f.instructionTypes);
  addFilter(shared, 'errorPattern', f.errorPattern);
  // Record-level filters: only the base table has these columns (chooseSource saw to it).
  const records: Conditions = { where: [], params };
  addFilter(records, 'programs', f.programIds);
  addFilter(records, 'signatures', f.signatures);
  addFilter(records, 'logMessage', f.logMessage);
  addRanges(records, f.ranges);
  // A source of failed records only has its edges' `NOT success` below.
  if ((f.status === 'succeeded' || f.status === 'failed') && source.status !== f.status) records.where.push(STATUS_SQL[f.status]);
  const columns = dims.filter((d) => !isTimeDimension(d)).map((d) => DIMENSIONS[d].column);
  const timed = dims.some(isTimeDimension);
  const branches: string[] = [];
  let viewWhere: string | undefined;
  if (plan.view) {
    const c = intervalCondition('hour_start', plan.view, 'view');
    Object.assign(params, c.params);
    viewWhere = [...shared.where, c.sql].join(' AND ');
    const cols = [...columns, ...(timed ? ['hour_start AS t'] : []), ...states.map((s) => (source.states[s] === s ? s : `${source.states[s]} AS ${s}`))];
    branches.push(`SELECT ${cols.join(', ')} FROM ${source.table} WHERE ${viewWhere}`);
  }
  if (plan.edges.length > 0) {
    const c = edgesCondition('block_time', plan.edges);
    Object.assign(params, c.params);
    const where = [...shared.where, ...records.where, ...(source.status === 'failed' ? [STATUS_SQL.failed] : []), `(${c.sql})`];
    const cols = [...columns, ...(timed ? ['toStartOfHour(block_time) AS t'] : []), ...states.map((s) => `${STATES[s]} AS ${s}`)];
    // Grouped by something always: an aggregate without GROUP BY answers one row even over
    // no records, and its min(block_time) would merge in as 1970.
    const groupBy = [...columns, ...(timed ? ['t'] : [])];
    branches.push(`SELECT ${cols.join(', ')} FROM ${BASE_TABLE} WHERE ${where.join(' AND ')}
      GROUP BY ${(groupBy.length > 0 ? groupBy : ['protocol_name']).join(', ')}`);
  }
  if (branches.length === 0) return undefined;
  if (viewWhere !== undefined && plan.edges.length === 0 && states.every((s) => source.states[s] === s)) {
    return { from: source.table, direct: true, where: [viewWhere] };
  }
  return { from: `(${branches.join('\nUNION ALL\n')})`, direct: false, where: [] };
}

/** The key expression of a time dimension over a column of hour starts. */
function timeKey(d: Dimension, q: Question, hourStart: string): string {
  const kind = (DIMENSIONS[d] as { time?: string }).time;
  if (kind === 'dayOfWeek') return `toDayOfWeek(${hourStart})`;
  return bucketSql(kind === 'question' || kind === undefined ? (q.granularity ?? 'hour') : (kind as Granularity), hourStart);
}

/**
 * The statement answering `q` over the measures of `catalog` (the model's by default);
 * undefined when nothing can match (no protocol to read, an empty range).
 */
export function compile(q: Question, catalog: Measures = MEASURES): CompiledStatement | undefined {
  const f = q.filters;
  if (f.protocols.length === 0) return undefined;
  const dims = q.dimensions ?? [];
  const { columns: selected } = measurePlan(q, catalog);
  // tx_count always: an answer without dimensions drops its empty row by it.
  const states = dedupe<State>(['tx_count', ...selected.flatMap((m) => statesOf(catalog, m))]);
  const params: Record<string, unknown> = {};
  const source = chooseSource(dims, states, f);
  const read = readOf(source, states, dims, f, params);
  if (read === undefined) return undefined;

  const keys = dims.map((d) => (isTimeDimension(d) ? `${timeKey(d, q, read.direct ? 'hour_start' : 't')} AS ${DIMENSIONS[d].column}` : DIMENSIONS[d].column));
  const keyColumns = dims.map((d) => DIMENSIONS[d].column);
  const select = [...keys, ...selected.map((m) => `${sqlOf(catalog, m)} AS ${measureColumn(m)}`)];
  const where = read.where;
  if (f.cells !== undefined) {
    where.push("concat(protocol_name, '#', toString(b)) IN {cells:Array(String)}");
    params.cells = f.cells.map((c) => `${c.protocol}#${c.start}`);
  }
  // Every group has records (each row counts at least one); only the one row of an
  // answer without dimensions can be empty.
  const having = dims.length === 0 ? ['sum(tx_count) > 0'] : [];
  const order = q.order;
  const keyDirection = (order?.dimensions ?? order?.direction ?? 'asc').toUpperCase();
  const orderBy = [
    ...(order?.measure === undefined ? [] : [`${measureColumn(order.measure)} ${order.direction.toUpperCase()}`]),
    ...keyColumns.map((k) => `${k} ${keyDirection}`),
  ];
  const after = q.page?.after;
  if (after !== undefined) {
    const sortColumn = order?.measure === undefined ? [] : [measureColumn(order.measure)];
    if (order === undefined || (order.dimensions ?? order.direction) !== order.direction) throw new Error('a keyset page needs one direction');
    const placeholders = [...(sortColumn.length > 0 ? ['{c_v:Float64}'] : []), ...dims.map((d, i) => `{c_k${i}:${DIMENSIONS[d].type}}`)];
    having.push(
      `(${[...sortColumn, ...keyColumns].join(', ')}) ${order.direction === 'asc' ? '>' : '<'}${q.page?.inclusive ? '=' : ''} (${placeholders.join(', ')})`,
    );
    if (sortColumn.length > 0) params.c_v = after.value;
    after.keys.forEach((k, i) => {
      params[`c_k${i}`] = k;
    });
  }
  if (q.page !== undefined) params.lim = q.page.limit;
  const sql = `SELECT ${select.join(', ')}
    FROM ${read.from}
    ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ${keyColumns.length > 0 ? `GROUP BY ${keyColumns.join(', ')}` : ''}
    ${having.length > 0 ? `HAVING ${having.join(' AND ')}` : ''}
    ${orderBy.length > 0 ? `ORDER BY ${orderBy.join(', ')}` : ''}
    ${q.page !== undefined ? 'LIMIT {lim:UInt32}' : ''}`;
  return { sql, params, costShape: { ...costShapeOf(q, catalog), ...(source.base ? { records: true } : {}) } };
}

/** What the cost model judges: the range, whether protocols were named, the time buckets, the percentile merges shown and sorted by. */
export function costShapeOf(q: Question, catalog: Measures = MEASURES): CostShape {
  const charged = [...q.measures, ...(q.order?.measure === undefined ? [] : [q.order.measure])];
  return {
    range: q.filters.range,
    protocolsGiven: q.filters.protocolsNamed ?? false,
    ...(q.dimensions?.includes('time') ? { granularity: q.granularity ?? 'hour' } : {}),
    percentiles: charged.filter((name) => {
      const m = measure(catalog, name);
      return !isDerived(m) && m.percentile === true;
    }).length,
  };
}

/** One row of an answer: the keys of the dimensions asked, and each measure's value. */
export interface AnswerRow {
  protocol?: string;
  instructionType?: string;
  program?: string;
  errorMessage?: string;
  time?: number;
  date?: number;
  week?: number;
  month?: number;
  dayOfWeek?: number;
  values: Record<string, number | string | [number, number, number]>;
}

const VALUE: Record<MeasureType, (v: unknown) => number | string | [number, number, number]> = {
  number: (v) => Number(v),
  text: (v) => String(v),
  quantiles: (v) => {
    const xs = v as number[] | undefined;
    return [Number(xs?.[0] ?? 0), Number(xs?.[1] ?? 0), Number(xs?.[2] ?? 0)];
  },
};

/** The rows of a compiled question as its answer rows, derived measures computed. */
export function readRows(q: Question, rows: readonly Record<string, unknown>[], catalog: Measures = MEASURES): AnswerRow[] {
  const { columns, derived } = measurePlan(q, catalog);
  return rows.map((r) => {
    const row: AnswerRow = { values: {} };
    for (const d of q.dimensions ?? []) {
      const v = r[DIMENSIONS[d].column];
      if (d === 'protocol' || d === 'instructionType' || d === 'program' || d === 'errorMessage') row[d] = String(v);
      else row[d] = Number(v);
    }
    for (const name of columns) {
      const m = measure(catalog, name);
      row.values[name] = VALUE[isDerived(m) ? 'number' : m.type](r[measureColumn(name)]);
    }
    for (const name of derived) {
      const m = measure(catalog, name);
      if (!isDerived(m)) continue;
      const [a, b] = m.of.map((x) => row.values[x] as number) as [number, number];
      // As the engine computes it: (a / b) * scale, in doubles; no group has zero records.
      row.values[name] = m.op === 'difference' ? a - b : b === 0 ? 0 : m.scale === undefined ? a / b : (a / b) * m.scale;
    }
    return row;
  });
}

/** A measure's number in a row; 0 without a row (no records matched). */
export const num = (row: AnswerRow | undefined, measure: string): number => (row?.values[measure] as number | undefined) ?? 0;

/** A measure's quantiles (0.5, 0.95, 0.99) in a row; zeros without a row. */
export const quantiles = (row: AnswerRow | undefined, measure: string): [number, number, number] =>
  (row?.values[measure] as [number, number, number] | undefined) ?? [0, 0, 0];
