// GraphQL's wire shape of the open questions mapped onto their declared requests
// (api/catalog/open-questions.ts) and back: `filters.slotRange` is the request's
// `slot`, `pagination` its `page`, `bucketBy` its `granularity`; questionName words a
// request's path in GraphQL's names for the one check's refusals. Every rule of these
// arguments is the request's (its schema and its cross-field rules): nothing is checked
// here but which filters a field takes (the fields share one input type), and nothing is read.
import { invalidParams } from '../../../core/errors.ts';
import type { RequestInput } from '../../../core/request-check.ts';
import { given, type CrossFieldRule } from '../../../core/request-rules.ts';
import type { RangeFilter } from '../../analytics/question/model.ts';

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
export type Args = Record<string, unknown>;

/** Each range filter's argument name and the request's range it sets (`ranges.fee`). */
const RANGE_ARGS: Readonly<Record<'slotRange' | 'feeRange' | 'computeRange' | 'accountsCount', RangeFilter>> = {
  slotRange: 'slot',
  feeRange: 'fee',
  computeRange: 'computeUnits',
  accountsCount: 'accountsCount',
};

/** GraphQL's names of request fields it takes under `filters` (every field's: declared-fields.ts too). */
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
/** And those of the open questions' own fields: the outcome and record ranges under `filters`, the page, the bucket size. */
const QUESTION_NAMES: Readonly<Record<string, string>> = {
  ...FILTER_NAMES,
  status: 'filters.status',
  success: 'filters.success',
  ...Object.fromEntries(Object.entries(RANGE_ARGS).map(([arg, r]) => [r, `filters.${arg}`])),
  page: 'pagination',
  granularity: 'bucketBy',
};

/** A request field's path in GraphQL's `names`: its head named there, then `.member` and `[index]`. */
const namedIn =
  (names: Readonly<Record<string, string>>) =>
  (path: string): string => {
    const [head = '', ...rest] = path.split('.');
    return `${names[head] ?? head}${rest.map((r) => (/^\d+$/.test(r) ? `[${r}]` : `.${r}`)).join('')}`;
  };

/** GraphQL's name of a request field's path (`protocols.2` is filters.protocols[2]). */
export const graphqlName = namedIn(FILTER_NAMES);
/** GraphQL's name of an open question's path (`fee.min` is filters.feeRange.min, `page.after` pagination.after). */
export const questionName = namedIn(QUESTION_NAMES);

/** GraphQL's names of a range's days; an order error names the dateRange. */
export const GRAPHQL_DAYS = { from: 'filters.dateRange.start', to: 'filters.dateRange.end', field: 'dateRange' };

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
  // It prices what transactions(...) would ask, so it takes the same filters, refused in its own name.
  queryComplexity: RECORD_FILTERS,
} as const satisfies Record<string, readonly (keyof FiltersArg)[]>;

/** Refuse any filter given that `field` does not take (FIELD_FILTERS, or a declared field's own). */
export function takesOnly<F extends string>(
  f: FiltersArg | null | undefined,
  field: F,
  taken: readonly string[] = FIELD_FILTERS[field as keyof typeof FIELD_FILTERS],
): void {
  for (const [n, v] of Object.entries(f ?? {})) {
    if (given(v) && !taken.includes(n)) throw invalidParams(`filters.${n} is not a filter of ${field} (it takes ${taken.join(', ')})`, n);
  }
}

/** An object without its null members (GraphQL's explicit nulls are absent values to the request). */
const withoutNulls = (o: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined =>
  given(o) ? Object.fromEntries(Object.entries(o).filter(([, v]) => given(v))) : undefined;

/** The filters' record ranges by the request's names ({fee: {min, max}}). */
const rangesOf = (f: FiltersArg | null | undefined): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(RANGE_ARGS).map(([arg, r]) => [r, withoutNulls(f?.[arg as keyof typeof RANGE_ARGS] as Record<string, unknown> | null | undefined)]),
  );

/**
 * An open question's arguments as its declared request's input: `filters` (the lists, texts,
 * record ranges, status and success; the days for the one conversion), `pagination` as `page`,
 * and `more` (groupBy, metrics, sort, granularity) by the request's names (an input object's
 * null members absent, as its own absent ones are). A filter the field does not take is
 * refused first (takesOnly). `required`: both days, in GraphQL's words (timeSeries' range is closed).
 */
export function questionInput(field: keyof typeof FIELD_FILTERS, args: Args, more: Record<string, unknown> = {}, required = false): RequestInput {
  const f = args.filters as FiltersArg | null | undefined;
  takesOnly(f, field);
  const d = f?.dateRange;
  if (required && (!given(d) || !given(d.start) || !given(d.end))) {
    throw invalidParams('filters.dateRange with both start and end (YYYY-MM-DD) is required', 'dateRange');
  }
  const { protocols, instructionTypes, programIds, signatures, logMessage, errorPattern, status, success } = f ?? {};
  const values = {
    ...{ protocols, instructionTypes, programIds, signatures, logMessage, errorPattern, status, success },
    ...rangesOf(f),
    page: withoutNulls(args.pagination as Record<string, unknown> | null | undefined),
    ...Object.fromEntries(
      Object.entries(more).map(([k, v]) => [k, typeof v === 'object' && !Array.isArray(v) ? withoutNulls(v as Record<string, unknown> | null) : v]),
    ),
  };
  return { values, ...(given(d) ? { days: { from: d.start, to: d.end, names: GRAPHQL_DAYS } } : {}) };
}

/** Members of a rule's document that name request fields (a path, or a list of them). */
const PATH_MEMBERS = new Set(['params', 'fields', 'field', 'list', 'of', 'property', 'param', 'anyGiven', 'noneGiven']);

/** A rule's document in GraphQL's names (`page.first` is pagination.first). */
function graphqlDoc(doc: unknown, key = ''): unknown {
  if (typeof doc === 'string') return PATH_MEMBERS.has(key) ? questionName(doc) : doc;
  if (Array.isArray(doc)) return doc.map((d) => graphqlDoc(d, key));
  if (typeof doc !== 'object' || doc === null) return doc;
  return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, graphqlDoc(v, k)]));
}

/** The rules of a request as a GraphQL description shows them (a declared field's, declared-fields.ts, the same way): in GraphQL's names. */
export const rulesLine = (rules: readonly CrossFieldRule[]): string =>
  rules.length === 0 ? '' : `Rules: ${rules.map((r) => JSON.stringify(graphqlDoc(r.doc))).join('; ')}.`;
