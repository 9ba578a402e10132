// The requests of GraphQL's open questions (transactions, timeSeries, failedTransactions,
// queryComplexity: the caller picks keys and measures), declared whole and checked by the
// one check (core/request-check.ts checkRequest): their list filters, range and texts, the
// record ranges (whole numbers compared exactly), status and success, the page (Relay's
// first/after or last/before), groupBy, metrics and sort, with their cross-field rules as
// values (core/request-rules.ts) that both run and show in the GraphQL descriptions.
// groupBy, metrics and sort are enums of the question model's measures, which a test may
// extend: the requests are a function of those words (`openQuestions`), which the GraphQL
// door builds once, with its schema, from the same vocabulary (question-vocabulary.ts).
import { Type } from '@sinclair/typebox';
import { GRAPHQL_MAX_FIRST, GRAPHQL_MAX_PATTERN_CHARS } from '../../core/limits/graphql.ts';
import { HOURS_PER_DAY, MAX_ACTIVITY_BUCKETS, PAGE_TOKEN_MAX_CHARS, QUESTION_MAX_LOG_MESSAGE_CHARS, QUESTION_RANGE_MAX } from '../../core/limits/questions.ts';
import { request } from '../../core/request-check.ts';
import {
  agrees,
  amongWhen,
  boundsInOrder,
  distinctItems,
  needsOneOf,
  notTogether,
  spanAtMost,
  type CrossFieldRule,
  type When,
} from '../../core/request-rules.ts';
import { FILTER_LISTS, WholeText } from '../../core/vocabulary/primitives.ts';
import { checkBuckets, GRANULARITIES, type Granularity } from '../analytics/question/granularity.ts';
import type { TimeRange } from '../analytics/types.ts';
import { stringEnum } from './declare.ts';
import { blockTime, ClosedBlockTime, options } from './params.ts';

/**
 * A range counted in buckets of the size `param` names is at most MAX_ACTIVITY_BUCKETS (hourly:
 * 24 a day; daily: 1, the last storable day has fewer hours, never more; weeks and months: 0,
 * as the storable range never holds more of them than the maximum), counted by checkBuckets.
 */
export const bucketsAtMost = (param: string): CrossFieldRule =>
  spanAtMost('range.gte', 'range.lte', { param, hour: HOURS_PER_DAY, day: 1, week: 0, month: 0 }, MAX_ACTIVITY_BUCKETS, (v) =>
    checkBuckets(v.range as Required<TimeRange>, (v[param] as Granularity | undefined) ?? 'hour'),
  );

/** A list filter of the vocabulary (FILTER_LISTS: its item's primitive, its cap): an empty one
 *  asks for nothing, so it is refused, as JSON-RPC refuses it (review G3), but for protocols,
 *  whose empty list is the protocol scope's to refuse ('list': name at least one). */
const listOf = (key: keyof typeof FILTER_LISTS, description: string) =>
  Type.Optional(Type.Array(FILTER_LISTS[key].item, { ...(key === 'protocols' ? {} : { minItems: 1 }), maxItems: FILTER_LISTS[key].max, description }));

const protocols = listOf('protocols', 'Protocol identifiers');
const instructionTypes = listOf('instructionTypes', 'Instruction types');
/** What records and groups of them are filtered by, beside the range. */
const recordLists = {
  protocols,
  instructionTypes,
  programIds: listOf('programIds', 'Program ids'),
  signatures: listOf('signatures', 'Transaction signatures'),
};

/** A text a filter matches within, of 1 to `max` characters (one refusal for either length). */
const text = (max: number, description: string) => {
  const words = `must be 1 to ${max} characters long`;
  return Type.Optional(Type.String({ minLength: 1, maxLength: max, description, 'x-refusal': { minLength: words, maxLength: words } }));
};
const logMessage = text(QUESTION_MAX_LOG_MESSAGE_CHARS, 'Text a log message of the record contains');

// ---- the record filters beside the lists: ranges of columns, the outcome ---------------------

/** The record columns a range filters (each bound at most its column type's largest). */
const RANGE_COLUMNS = Object.keys(QUESTION_RANGE_MAX) as (keyof typeof QUESTION_RANGE_MAX)[];
const bounds = (max: bigint, what: string) =>
  Type.Optional(
    options(
      { min: Type.Optional(WholeText(max, `Least ${what}, included`)), max: Type.Optional(WholeText(max, `Greatest ${what}, included`)) },
      `${what} from min to max, both included (either may be left out)`,
    ),
  );
/** The record columns' ranges, each by its column's name in the question model (`fee: {min, max}`). */
const recordRanges = {
  slot: bounds(QUESTION_RANGE_MAX.slot, 'slot'),
  fee: bounds(QUESTION_RANGE_MAX.fee, 'fee in lamports'),
  computeUnits: bounds(QUESTION_RANGE_MAX.computeUnits, 'compute units'),
  accountsCount: bounds(QUESTION_RANGE_MAX.accountsCount, 'accounts count'),
};
const STATUSES = ['SUCCEEDED', 'FAILED', 'ALL'] as const;
/** What records are filtered by besides lists and range: column ranges, the outcome (either way), log text. */
const recordFilters = {
  ...recordRanges,
  status: Type.Optional(stringEnum(STATUSES, 'Succeeded, failed or all records (default ALL)', 'TransactionStatus')),
  success: Type.Optional(Type.Boolean({ description: 'Only succeeded (true) or only failed (false) records' })),
  logMessage,
};
const RECORD_RULES: readonly CrossFieldRule[] = [
  ...RANGE_COLUMNS.map((c) => boundsInOrder(c)),
  agrees('success', 'status', { SUCCEEDED: true, FAILED: false }),
];

// ---- the page: Relay's two ways, each whole ---------------------------------------------------

/** A page size one way; a refusal says which cursor pages on that way. */
const size = (way: string, on: 'after' | 'before') =>
  Type.Optional(
    Type.Integer({
      description: `${way}: this many items, at most ${GRAPHQL_MAX_FIRST}`,
      'x-refusal': `must be between 1 and ${GRAPHQL_MAX_FIRST} (got {value}); page on with {page.${on}}`,
      minimum: 1,
      maximum: GRAPHQL_MAX_FIRST,
    }),
  );
const cursor = (way: string) =>
  Type.Optional(
    Type.String({
      description: `${way}: the items past this cursor`,
      minLength: 1,
      maxLength: PAGE_TOKEN_MAX_CHARS,
      'x-refusal': `is not a cursor this service issued (at most ${PAGE_TOKEN_MAX_CHARS} characters); pass back an edge cursor, pageInfo.startCursor or pageInfo.endCursor unchanged`,
    }),
  );
const page = Type.Optional(
  options(
    { first: size('Forward', 'after'), after: cursor('Forward'), last: size('Backward', 'before'), before: cursor('Backward') },
    'Forward with first/after, or backward with last/before',
  ),
);
/** Relay's rules of a page (any connection's: exportJobs' too): one way per request, each whole. */
export const PAGE_RULES: readonly CrossFieldRule[] = [
  notTogether(
    'page.first',
    'page.last',
    '{page.first} and {page.last} cannot be used together: page forward with first (and after), or backward with last (and before)',
  ),
  notTogether(
    'page.after',
    'page.before',
    '{page.after} and {page.before} cannot be used together: page forward with first/after, or backward with last/before',
  ),
  notTogether('page.first', 'page.before', '{page.before} pages backward: use it with {page.last}, not {page.first}'),
  notTogether('page.last', 'page.after', '{page.after} pages forward: use it with {page.first}, not {page.last}'),
];

// ---- the words of keys, metrics and sorts: the requests built from them ----------------------

/** The words an open question's keys, metrics and sorts are named by (the GraphQL door's vocabulary, from the question model's measures). */
export interface OpenWords {
  /** GroupBy values; `timeKeys`, those keying by time (a series' buckets are bucketBy's instead). */
  groupBy: readonly string[];
  timeKeys: readonly string[];
  /** Metric values and the measure each reads (a renamed metric's two names read one). */
  metrics: ReadonlyMap<string, string>;
  /** Sort fields: all; those a listing takes; those groups take; each key sort with the GroupBy values it needs grouped. */
  sorts: { all: readonly string[]; listing: readonly string[]; groups: readonly string[]; keys: Readonly<Record<string, readonly string[]>> };
  /** What failedTransactions groups by and offers. */
  failures: { groupBy: readonly string[]; metrics: readonly string[] };
}

/** Records, not groups: neither groupBy nor metrics asked. */
const LISTING: When = { noneGiven: ['groupBy', 'metrics'] };
const GROUPS: When = { anyGiven: ['groupBy', 'metrics'] };

/** A list of key or metric values; `refusal`: words for an item that is not one of `values` (x-refusal). */
const enumList = (values: readonly string[], title: string, description: string, most: number, refusal?: string, least = 0) =>
  Type.Optional(
    Type.Array(
      {
        ...stringEnum(values, `A ${title === 'GroupBy' ? 'group key' : 'metric'}`, title),
        ...(refusal === undefined ? {} : { 'x-refusal': { enum: refusal } }),
      },
      {
        ...(least > 0 ? { minItems: least, 'x-refusal': { minItems: 'must name at least one metric' } } : {}),
        maxItems: most,
        description,
      },
    ),
  );
const keyList = (values: readonly string[], refusal?: string) => enumList(values, 'GroupBy', 'What groups are keyed by', values.length, refusal);
const metricList = (values: readonly string[], most: number, refusal?: string, least = 0) =>
  enumList(values, 'Metric', 'Aggregates over the records of a group', most, refusal, least);
/** Values in words: "A, B and C". */
const andList = (v: readonly string[]): string => (v.length < 2 ? v.join('') : `${v.slice(0, -1).join(', ')} and ${v.at(-1)}`);

/** The rules of keys and metrics: each named once, a renamed metric's two names once. */
const listRules = (w: OpenWords): CrossFieldRule[] => [distinctItems('groupBy'), distinctItems('metrics', { of: (m) => w.metrics.get(m), what: 'metric' })];

/** How a sort fits what is asked: records by DATE or a column; groups by a metric or a key they are grouped by. */
const sortRules = (w: OpenWords): CrossFieldRule[] => [
  amongWhen(
    'sort.field',
    w.sorts.listing,
    LISTING,
    `{sort.field} sorts groups by {value}; without {groupBy} or {metrics} records are sorted by ${w.sorts.listing.join(', ')}`,
  ),
  amongWhen('sort.field', w.sorts.groups, GROUPS, '{sort.field} {value} sorts records; sort groups by a metric (e.g. SUM_FEE) or a grouped key'),
  needsOneOf('sort.field', 'groupBy', w.sorts.keys, GROUPS, '{sort.field} {value} sorts groups by a key they are grouped by; add it to {groupBy}'),
];

/** The requests of the open questions, over the words of a vocabulary (built once per vocabulary by the door). */
export function openQuestions(w: OpenWords) {
  const measures = new Set(w.metrics.values()).size;
  const transactions = options(
    {
      ...recordLists,
      range: blockTime,
      ...recordFilters,
      page,
      groupBy: keyList(w.groupBy),
      metrics: metricList([...w.metrics.keys()], measures),
      sort: Type.Optional(
        options(
          {
            field: Type.Optional(stringEnum(w.sorts.all, 'What the sort orders by', 'SortField')),
            direction: Type.Optional(stringEnum(['ASC', 'DESC'], 'ASC or DESC (default DESC)', 'SortDirection')),
          },
          'The order of records or groups',
        ),
      ),
    },
    'Records or groups of them: filters, range, page, keys, metrics and sort',
  );
  const failures = options(
    {
      protocols,
      instructionTypes,
      range: blockTime,
      errorPattern: text(GRAPHQL_MAX_PATTERN_CHARS, 'Text the error message contains'),
      page,
      groupBy: keyList(w.failures.groupBy, `is {value}: failedTransactions groups by ${andList(w.failures.groupBy)}`),
      metrics: metricList(w.failures.metrics, w.failures.metrics.length, `is {value}: failedTransactions offers ${andList(w.failures.metrics)}`),
    },
    'Failed transactions grouped: their protocols, instruction types, range, error text, page, keys and metrics',
  );
  const series = options(
    {
      ...recordLists,
      range: ClosedBlockTime,
      ...recordFilters,
      granularity: Type.Optional(stringEnum(GRANULARITIES, 'hour, day, week or month (default hour)', 'Granularity')),
      groupBy: keyList(
        w.groupBy.filter((k) => !w.timeKeys.includes(k)),
        'is {value}, not allowed in timeSeries: {granularity} sets the time buckets',
      ),
      metrics: metricList([...w.metrics.keys()], measures, undefined, 1),
    },
    'A time series: its filters, closed range, bucket size, keys and metrics',
  );
  return {
    transactions: request(transactions, 'list', [
      ...listRules(w),
      ...PAGE_RULES,
      ...RECORD_RULES,
      notTogether('signatures', 'logMessage', '{logMessage} cannot be combined with {signatures} (signature reads do not hold log messages)', LISTING),
      ...sortRules(w),
    ]),
    failedTransactions: request(failures, 'list', [...listRules(w), ...PAGE_RULES]),
    timeSeries: request(series, 'list', [...listRules(w), ...RECORD_RULES, bucketsAtMost('granularity')]),
  } as const;
}

/** The open questions' requests, as one vocabulary declares them. */
export type OpenQuestions = ReturnType<typeof openQuestions>;
