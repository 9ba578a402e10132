// The arguments of open questions (GraphQL's filters, pagination, groupBy, metrics and sort)
// turned into the analytics layer's requests. Their list filters, days and texts are mapped
// onto their declared requests (api/catalog/open-questions.ts) for the one check; what is
// still checked here are the arguments not declared yet: groupBy, metrics and sort against
// the vocabulary (question-vocabulary.ts: the enums come from the same measures, so a value
// the schema takes is one this knows), the record ranges, status and success. Nothing is read here.
import { invalidParams } from '../../../core/errors.ts';
import { QUESTION_RANGE_MAX, QUOTED_NUMBER_MAX_CHARS } from '../../../core/limits/questions.ts';
import type { CheckedRequest, RequestInput } from '../../../core/request-check.ts';
import type { ListFilters } from '../../catalog/open-questions.ts';
import type { GroupFilters, GroupPageRequest, Metric } from '../../analytics/presets/group-pages.ts';
import type { Bounds, RangeFilter } from '../../analytics/question/model.ts';
import type { ListRequest, TransactionFilters } from '../../analytics/types.ts';
import { pageOf, type PaginationArg } from './pagination-args.ts';
import { KEY_SORTS, RECORD_SORTS, type GroupKey, type QuestionVocabulary } from './question-vocabulary.ts';

interface DateRangeArg {
  start?: string | null;
  end?: string | null;
}
/** A range's bounds as the BigInt scalar parses them: canonical decimal text (api/doors/graphql/bigint-scalar.ts). */
interface RangeArg {
  min?: string | null;
  max?: string | null;
}
export interface FiltersArg {
  protocols?: string[] | null;
  dateRange?: DateRangeArg | null;
  errorPattern?: string | null;
  instructionTypes?: string[] | null;
  programIds?: string[] | null;
  signatures?: string[] | null;
  status?: 'SUCCEEDED' | 'FAILED' | 'ALL' | null;
  slotRange?: RangeArg | null;
  feeRange?: RangeArg | null;
  computeRange?: RangeArg | null;
  accountsCount?: RangeArg | null;
  success?: boolean | null;
  logMessage?: string | null;
}
interface SortArg {
  field?: string | null;
  direction?: 'ASC' | 'DESC' | null;
}
export type Args = Record<string, unknown>;

/** Each range filter's argument name and the model's range it sets. */
const RANGE_ARGS: Readonly<Record<'slotRange' | 'feeRange' | 'computeRange' | 'accountsCount', RangeFilter>> = {
  slotRange: 'slot',
  feeRange: 'fee',
  computeRange: 'computeUnits',
  accountsCount: 'accountsCount',
};

export const present = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

/** GraphQL's names of the request fields it takes under `filters`. */
const FILTER_NAMES: Readonly<Record<string, string>> = {
  protocol: 'filters.protocols',
  protocols: 'filters.protocols',
  range: 'filters.dateRange',
  instructionTypes: 'filters.instructionTypes',
  programIds: 'filters.programIds',
  signatures: 'filters.signatures',
  logMessage: 'filters.logMessage',
  errorPattern: 'filters.errorPattern',
};

/** GraphQL's name of a request field's path (`protocols.2` is filters.protocols[2]). */
export function graphqlName(path: string): string {
  const [head = '', ...rest] = path.split('.');
  const name = FILTER_NAMES[head] ?? head;
  return rest.length === 0 ? name : `${name}${rest.map((r) => (/^\d+$/.test(r) ? `[${r}]` : `.${r}`)).join('')}`;
}

/** GraphQL's names of a range's days; an order error names the dateRange. */
export const GRAPHQL_DAYS = { from: 'filters.dateRange.start', to: 'filters.dateRange.end', field: 'dateRange' };

/**
 * The list filters and filters.dateRange as an open question's request (api/catalog/open-questions.ts):
 * the one check holds each item to its primitive, resolves the protocols and converts the days
 * (core/request-check.ts). A filter the field does not take was refused before (takesOnly).
 * `required`: both days, in GraphQL's words (timeSeries' range is closed).
 */
export function scopeInput(f: FiltersArg | null | undefined, more: Record<string, unknown> = {}, required = false): RequestInput {
  const d = f?.dateRange;
  if (required && (!present(d) || !present(d.start) || !present(d.end))) {
    throw invalidParams('filters.dateRange with both start and end (YYYY-MM-DD) is required', 'dateRange');
  }
  const lists = { protocols: f?.protocols, instructionTypes: f?.instructionTypes, programIds: f?.programIds, signatures: f?.signatures };
  const texts = { logMessage: f?.logMessage, errorPattern: f?.errorPattern };
  return { values: { ...lists, ...texts, ...more }, ...(present(d) ? { days: { from: d.start, to: d.end, names: GRAPHQL_DAYS } } : {}) };
}

/** What the one check gave an open question: its protocols (resolved, and as asked), its other list filters and its range. */
export type Scope = Pick<CheckedRequest, 'protocols' | 'protocolsAsked' | 'range'> & Omit<ListFilters, 'protocols'>;

/** Every filter of the SDL's TransactionFilters but errorPattern: what records and groups of them are filtered by. */
const RECORD_FILTERS = [
  'protocols',
  'dateRange',
  'instructionTypes',
  'programIds',
  'signatures',
  'status',
  'success',
  'slotRange',
  'feeRange',
  'computeRange',
  'accountsCount',
  'logMessage',
] as const;

/**
 * The filters each open question's GraphQL field takes, declared once (a field asked through a
 * declared request takes those of its request, declared-fields.ts): the fields share one SDL input type
 * (TransactionFilters), so a filter a field does not declare here is refused by name rather
 * than ignored (an allow-list: a filter added to the input type is refused until a field takes it).
 */
export const FIELD_FILTERS = {
  timeSeries: RECORD_FILTERS,
  failedTransactions: ['protocols', 'dateRange', 'instructionTypes', 'errorPattern'],
  transactions: RECORD_FILTERS,
} as const satisfies Record<string, readonly (keyof FiltersArg)[]>;

/** Refuse any filter given that `field` does not take (FIELD_FILTERS, or a declared field's own). */
export function takesOnly<F extends string>(
  f: FiltersArg | null | undefined,
  field: F,
  taken: readonly string[] = FIELD_FILTERS[field as keyof typeof FIELD_FILTERS],
): void {
  for (const [n, v] of Object.entries(f ?? {})) {
    if (present(v) && !taken.includes(n)) throw invalidParams(`filters.${n} is not a filter of ${field} (it takes ${taken.join(', ')})`, n);
  }
}

/** The enum values of a list argument, each at most once: a repeated value is refused (it was dropped silently). */
function distinct(v: unknown, name: string, max: number): string[] {
  const names = (v as string[] | null | undefined) ?? [];
  if (names.length > max) throw invalidParams(`${name} may hold at most ${max} entries, each value once (got ${names.length})`, name);
  const seen = new Set<string>();
  for (const [i, n] of names.entries()) {
    if (seen.has(n)) throw invalidParams(`${name}[${i}]: ${n} is listed twice; name each value once`, name);
    seen.add(n);
  }
  return names;
}

/**
 * The measures named by `metrics` (enum values the schema took from the same vocabulary), in
 * the order named. A metric named twice, under its name and its older one, is refused as a
 * repeated value is.
 */
export function metricsOf(v: unknown, vocab: QuestionVocabulary): Metric[] {
  // At most one name per metric: a renamed metric's two names count once.
  const names = distinct(v, 'metrics', new Set(vocab.metricOf.values()).size);
  return names.map((n, i) => {
    const m = vocab.metricOf.get(n);
    if (m === undefined) throw invalidParams(`metrics: ${n} is not a metric`, 'metrics');
    const other = names.findIndex((x) => vocab.metricOf.get(x) === m);
    if (other < i) throw invalidParams(`metrics[${i}]: ${n} is the metric ${names[other]} names; name it once`, 'metrics');
    return m;
  });
}

export function keysOf(v: unknown, vocab: QuestionVocabulary): GroupKey[] {
  return distinct(v, 'groupBy', vocab.groupKeys.length).map((n) => {
    const k = vocab.keyOf.get(n);
    if (k === undefined) throw invalidParams(`groupBy: ${n} is not a group key`, 'groupBy');
    return k.dimension;
  });
}

/** A range's bounds, each a whole number from 0 to the column's maximum, compared exactly (as BigInt). */
function bounds(r: RangeArg, name: string, max: bigint): Bounds {
  const out: Bounds = {};
  for (const side of ['min', 'max'] as const) {
    const v = r[side];
    if (!present(v)) continue;
    const n = /^-?\d+$/.test(v) ? BigInt(v) : undefined;
    if (n === undefined || n < 0n || n > max)
      throw invalidParams(`filters.${name}.${side} must be a whole number from 0 to ${max} (got ${v.slice(0, QUOTED_NUMBER_MAX_CHARS)})`, name);
    out[side] = n.toString();
  }
  if (out.min !== undefined && out.max !== undefined && BigInt(out.min) > BigInt(out.max))
    throw invalidParams(`filters.${name}.min (${out.min}) is above its max (${out.max})`, name);
  return out;
}

/** The record-level filters but the lists (ranges, success or status, log messages): the base table answers them. */
function recordFilters(f: FiltersArg | null | undefined): Pick<GroupFilters, 'success' | 'ranges' | 'logMessage'> {
  const ranges: Partial<Record<RangeFilter, Bounds>> = {};
  for (const [arg, name] of Object.entries(RANGE_ARGS) as [keyof typeof RANGE_ARGS, RangeFilter][]) {
    const r = f?.[arg];
    if (present(r)) ranges[name] = bounds(r, arg, QUESTION_RANGE_MAX[name]);
  }
  const status = f?.status === 'SUCCEEDED' ? true : f?.status === 'FAILED' ? false : undefined;
  const success = present(f?.success) ? f.success : status;
  if (present(f?.success) && status !== undefined && status !== f.success) {
    throw invalidParams(`filters.success (${f.success}) contradicts filters.status (${f.status})`, 'success');
  }
  // Its length is the one check's (open-questions.ts).
  const log = f?.logMessage;
  return {
    ...(success !== undefined ? { success } : {}),
    ...(Object.keys(ranges).length > 0 ? { ranges } : {}),
    ...(present(log) ? { logMessage: log } : {}),
  };
}

/** The filters of an aggregate: protocols (as asked) and range (checked), instruction types and the record-level ones. */
export function groupFilters(f: FiltersArg | null | undefined, scope: Scope): GroupFilters {
  const protocols = scope.protocolsAsked;
  const range = scope.range;
  const { instructionTypes, programIds, signatures } = scope;
  return {
    range,
    ...(protocols ? { protocols } : {}),
    ...(instructionTypes ? { instructionTypes } : {}),
    ...(programIds ? { programIds } : {}),
    ...(signatures ? { signatures } : {}),
    ...recordFilters(f),
  };
}

/** What transactions(filters, pagination, groupBy, metrics, sort) asks: records, or groups (no keys but metrics: one group of everything). */
export type TransactionsAsk = { kind: 'listing'; request: ListRequest; points: number } | { kind: 'groups'; request: GroupPageRequest; points: number };

/** The sort of groups: a metric (default COUNT, or the first metric asked), or a grouped key. */
function groupSort(
  sort: SortArg | null | undefined,
  keys: readonly GroupKey[],
  metrics: readonly Metric[],
  vocab: QuestionVocabulary,
): GroupPageRequest['sort'] {
  const direction = sort?.direction === 'ASC' ? 'asc' : 'desc';
  const field = sort?.field ?? undefined;
  if (field === undefined) return { metric: metrics.includes('count') ? 'count' : metrics[0]!, direction };
  const metric = vocab.metricOf.get(field);
  if (metric !== undefined) return { metric, direction };
  if (field in RECORD_SORTS) throw invalidParams(`sort.field ${field} sorts records; sort groups by a metric (e.g. SUM_FEE) or a grouped key`, 'sort');
  const key = KEY_SORTS[field]?.keys.find((k) => keys.includes(k));
  if (key === undefined) throw invalidParams(`sort.field ${field} sorts groups by a key they are grouped by; add it to groupBy`, 'sort');
  return { key, direction };
}

/** The sort fields a listing takes besides DATE, for its refusal. */
const RECORD_SORT_NAMES = [...Object.keys(RECORD_SORTS), ...Object.keys(KEY_SORTS).filter((k) => KEY_SORTS[k]!.record !== undefined)].join(', ');

/**
 * The arguments of transactions(...) but protocols and days, checked now; its request once the
 * one check gave those (`scope`). Nothing is read.
 */
export function transactionsAsk(args: Args, vocab: QuestionVocabulary): (scope: Scope) => TransactionsAsk {
  const f = args.filters as FiltersArg | null | undefined;
  takesOnly(f, 'transactions');
  const page = pageOf(args.pagination as PaginationArg | null | undefined);
  const keys = keysOf(args.groupBy, vocab);
  const asked = metricsOf(args.metrics, vocab);
  const sort = args.sort as SortArg | null | undefined;
  const listing = keys.length === 0 && asked.length === 0;
  const field = sort?.field ?? undefined;
  // Records: in time order (DATE), or by a record column then time.
  const recordSort = field === undefined ? undefined : (RECORD_SORTS[field]?.column ?? KEY_SORTS[field]?.record);
  if (listing && field !== undefined && field !== 'DATE' && recordSort === undefined) {
    throw invalidParams(`sort.field sorts groups by ${field}; without groupBy or metrics records are sorted by DATE, ${RECORD_SORT_NAMES}`, 'sort');
  }
  const metrics = asked.length > 0 ? asked : ['count'];
  const groupOrder = listing ? undefined : groupSort(sort, keys, metrics, vocab);
  const records = recordFilters(f);
  if (listing && records.logMessage !== undefined && present(f?.signatures)) {
    throw invalidParams('filters.logMessage cannot be combined with filters.signatures (signature reads do not hold log messages)', 'logMessage');
  }
  return (scope) => scopedAsk(records, scope, { keys, metrics, groupOrder, page, sort, recordSort });
}

/** The request of transactions(...): its record filters (`s`) with the list filters and range the one check gave. */
function scopedAsk(
  s: ReturnType<typeof recordFilters>,
  scope: Scope,
  o: {
    keys: GroupKey[];
    metrics: Metric[];
    groupOrder: GroupPageRequest['sort'] | undefined;
    page: ReturnType<typeof pageOf>;
    sort: SortArg | null | undefined;
    recordSort: ListRequest['sortBy'];
  },
): TransactionsAsk {
  const { keys, metrics, groupOrder, page, sort, recordSort } = o;
  const cursor = page.cursor ? { cursor: page.cursor } : {};
  const filters: GroupFilters = { ...groupFilters(undefined, scope), ...s };
  if (groupOrder !== undefined) {
    return {
      kind: 'groups',
      request: { filters, keys, metrics, sort: groupOrder, limit: page.limit, direction: page.direction, ...cursor },
      points: page.limit,
    };
  }
  // A listing's filters: the records' own, with the record-level ones.
  const { range, protocols, instructionTypes, programIds, signatures, success, ranges, logMessage } = filters;
  const listed: TransactionFilters = {
    ...(protocols ? { protocols: [...protocols] } : {}),
    ...(range.gte !== undefined || range.lte !== undefined ? { blockTime: range } : {}),
    ...(instructionTypes ? { instructionTypes: [...instructionTypes] } : {}),
    ...(programIds ? { programIds: [...programIds] } : {}),
    ...(signatures ? { signatures: [...signatures] } : {}),
    ...(success !== undefined ? { status: success ? ('succeeded' as const) : ('failed' as const) } : {}),
    ...(ranges ? { ranges } : {}),
    ...(logMessage !== undefined ? { logMessage } : {}),
  };
  const sortBy = recordSort === undefined ? {} : { sortBy: recordSort };
  return {
    kind: 'listing',
    request: { filters: listed, sortOrder: sort?.direction === 'ASC' ? 'asc' : 'desc', ...sortBy, limit: page.limit, direction: page.direction, ...cursor },
    points: page.limit,
  };
}
