// The parameters operations share, as TypeBox schemas: built from the vocabulary's primitives
// (core/vocabulary/primitives.ts) with SPEC's defaults and maxima (core/limits/) and
// SPEC's words as descriptions. A primitive with a pattern keeps its own description: it is
// the rule error messages quote ("must be a Base58 signature of 64-88 characters").
import { Type, type TSchema } from '@sinclair/typebox';
import { LIST_LIMITS, PAGE_TOKEN_MAX_CHARS, REST_OFFSET_WINDOW } from '../../core/limits/questions.ts';
import {
  ActiveProtocolName,
  Address,
  BlockTimeRange,
  CheckedDay,
  FILTER_LISTS,
  ProtocolName,
  Signature,
  SORT_ORDERS,
  TX_STATUSES,
  UnixSeconds,
} from '../../core/vocabulary/primitives.ts';
import { GRANULARITIES } from '../analytics/question/granularity.ts';
import { stringEnum, withDefault } from './declare.ts';

/** A closed answer schema: a result carries SPEC's fields and nothing else. */
export const strict = <T extends TSchema>(s: T): T => ({ ...s, additionalProperties: false });

/** Rows per answer, 1 to SPEC's maximum, SPEC's default when absent. */
export const limit = (l: { default: number; max: number }) =>
  withDefault(Type.Integer({ minimum: 1, maximum: l.max, description: `Rows to return: default ${l.default}, at most ${l.max}` }), l.default);

/** A non-empty list of at most `max` items (an empty list would filter everything away). */
export const list = <T extends TSchema>(items: T, max: number, description: string) => Type.Array(items, { minItems: 1, maxItems: max, description });
/** One of the list filters every interface shares (FILTER_LISTS). */
const filterList = <K extends keyof typeof FILTER_LISTS>(key: K, description: string) =>
  Type.Optional(list(FILTER_LISTS[key].item, FILTER_LISTS[key].max, description));

/** An options object: no fields beyond those declared. */
export const options = <P extends Parameters<typeof Type.Object>[0]>(properties: P, description: string) =>
  Type.Object(properties, { additionalProperties: false, description });

export const blockTime = Type.Optional({ ...BlockTimeRange, description: 'Range filter {gte, lte}: Unix timestamps, both bounds inclusive' });
/** A closed range: both bounds required (getProtocolActivity). */
export const ClosedBlockTime = Type.Object(
  { gte: UnixSeconds, lte: UnixSeconds },
  {
    additionalProperties: false,
    description: 'Range filter {gte, lte}: Unix timestamps, both bounds inclusive and both required',
  },
);

export const sortOrder = (order: (typeof SORT_ORDERS)[number]) => withDefault(stringEnum(SORT_ORDERS, `asc or desc (default ${order})`, 'SortOrder'), order);

const filterFields = {
  blockTime,
  status: Type.Optional(stringEnum(TX_STATUSES, 'succeeded, failed or all (default all)', 'TransactionStatus')),
  protocols: filterList('protocols', 'Protocol identifiers'),
  programIds: filterList('programIds', 'Program identifiers'),
  signatures: filterList('signatures', 'Transaction signatures'),
};

/** The filter of getTransactions beyond the address listing's. */
export const instructionTypesFilter = filterList('instructionTypes', 'Instruction types');

/** The filters object of getTransactions. */
export const Filters = options(
  {
    ...filterFields,
    instructionTypes: instructionTypesFilter,
  },
  'Filters, all optional; a record must match every one given',
);
/** getTransactionsForAddress: the same filters except instructionTypes, which SPEC does not list for it. */
export const AddressFilters = options(filterFields, 'Filters, all optional (no instructionTypes for this method)');

/** A record listing's filters, door-neutral (declared.ts: `range` is JSON-RPC's blockTime): what
 *  its request holds at the top level, in REST's order of its query. */
export const listingFilters = {
  protocols: filterFields.protocols,
  programIds: filterFields.programIds,
  range: blockTime,
  signatures: filterFields.signatures,
  status: filterFields.status,
};
/** The options every keyset listing takes. */
export const listingOptions = (order: (typeof SORT_ORDERS)[number]) => ({
  sortOrder: sortOrder(order),
  limit: limit(LIST_LIMITS.transactions),
  paginationToken: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: PAGE_TOKEN_MAX_CHARS,
      description: 'The paginationToken of the previous page, unchanged, to continue after it',
    }),
  ),
});

export { Address, ProtocolName, Signature };

// ---- REST query parameters (SPEC's snake_case names): schemas only, data the REST routes
// (api/doors/rest/) and the declarations' REST words name; no route is built here ------------------

/** A primitive of the vocabulary with REST's own description (the rule stays the primitive's: REST words errors by pattern). */
const described = <T extends TSchema>(primitive: T, description: string, extra: object = {}): T => ({ ...primitive, description, ...extra });
/** A day of a REST range: converted by the one check (before its schema, in its words: which
 *  part of the day is wrong); the OpenAPI document states CalendarDay's rule for it (openapi-answers.ts). */
const day = (description: string) => described(CheckedDay, description, { examples: ['2025-01-01'] });

export const query = {
  protocol_name: described(ActiveProtocolName, 'Protocol identifier, e.g. jupiter_v6 (GET /api/v1/stats lists them); unknown or inactive: 400'),
  program_id: described(Address, 'Program id (Base58)'),
  signature: described(Signature, 'Transaction signature (Base58)'),
  date_from: day('First day, YYYY-MM-DD, inclusive, UTC (from 00:00:00)'),
  date_to: day('Last day, YYYY-MM-DD, inclusive, UTC (until 23:59:59)'),
  limit: withDefault(
    Type.Integer({
      minimum: 1,
      maximum: LIST_LIMITS.restTransactions.max,
      description: `Rows per page, 1-${LIST_LIMITS.restTransactions.max}`,
    }),
    LIST_LIMITS.restTransactions.default,
  ),
  offset: withDefault(
    Type.Integer({
      minimum: 0,
      maximum: REST_OFFSET_WINDOW - 1,
      description: `Rows to skip; offset + limit is at most ${REST_OFFSET_WINDOW} (page further with cursor)`,
    }),
    0,
  ),
  /** The keyset cursor: the same signed token as JSON-RPC's paginationToken (api/analytics/paging/page-token.ts). */
  cursor: Type.String({
    minLength: 1,
    maxLength: PAGE_TOKEN_MAX_CHARS,
    description:
      'meta.next of the previous page, unchanged, to continue right after it (with the same filters); reaches every record of any range. Not combined with offset',
  }),
  granularity: withDefault(stringEnum(GRANULARITIES, 'Bucket size: hour, day, week (ISO weeks, from Monday 00:00 UTC) or month (UTC)', 'Granularity'), 'hour'),
};

/** The optional day range every REST analytics route takes. */
export const dayRangeQuery = { date_from: Type.Optional(query.date_from), date_to: Type.Optional(query.date_to) };
