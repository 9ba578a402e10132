// The requests of GraphQL's open questions (transactions, timeSeries, failedTransactions,
// queryComplexity: the caller picks keys and measures), as far as they are declared: their
// list filters and range, checked by the one check (core/request-check.ts checkRequest: the
// primitives, the one day-range conversion, the protocol scope) and timeSeries' bucket count
// as a declared rule.
// Their keys, metrics and sort are still checked by the door (api/doors/graphql/question-args.ts):
// those enums come from the question model's measures, which a test may extend.
import { Type } from '@sinclair/typebox';
import { GRAPHQL_MAX_PATTERN_CHARS } from '../../core/limits/graphql.ts';
import { HOURS_PER_DAY, MAX_ACTIVITY_BUCKETS, QUESTION_MAX_LOG_MESSAGE_CHARS } from '../../core/limits/questions.ts';
import { request, spanAtMost, type CrossFieldRule } from '../../core/request-check.ts';
import { FILTER_LISTS } from '../../core/vocabulary/primitives.ts';
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

/** A list filter of the vocabulary (FILTER_LISTS: its item's primitive, its cap). No minItems:
 *  an empty protocols list is the protocol scope's to refuse ('list': name at least one). */
const listOf = (key: keyof typeof FILTER_LISTS, description: string) =>
  Type.Optional(Type.Array(FILTER_LISTS[key].item, { maxItems: FILTER_LISTS[key].max, description }));

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

/** A connection of records or groups: its list filters (protocols each active) and its range. */
const ConnectionRequest = options({ ...recordLists, range: blockTime, logMessage }, 'An open question: its list filters, range and log text');

/** failedTransactions: its protocols, instruction types and range. */
const FailuresRequest = options(
  { protocols, instructionTypes, range: blockTime, errorPattern: text(GRAPHQL_MAX_PATTERN_CHARS, 'Text the error message contains') },
  'Failed transactions grouped: their protocols, instruction types, range and error text',
);

/** timeSeries: a closed range, in buckets of `granularity`. */
const SeriesRequest = options(
  {
    ...recordLists,
    range: ClosedBlockTime,
    logMessage,
    granularity: Type.Optional(stringEnum(GRANULARITIES, 'hour, day, week or month (default hour)', 'Granularity')),
  },
  'A time series: its list filters, closed range and bucket size',
);

/** The list filters of an open question's request, as the checked request holds them. */
export type ListFilters = Partial<Record<keyof typeof recordLists, string[]>>;

/** The text filters of an open question's request. */
export type TextFilters = { logMessage?: string; errorPattern?: string };

export const OPEN_QUESTIONS = {
  transactions: request(ConnectionRequest, 'list'),
  failedTransactions: request(FailuresRequest, 'list'),
  timeSeries: request(SeriesRequest, 'list', [bucketsAtMost('granularity')]),
} as const;
