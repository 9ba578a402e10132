// JSON Schemas of the REST interface. They drive request validation, response
// serialization (fast-json-stringify drops anything undeclared) and the OpenAPI document.
// Field names of the objects equal the JSON-RPC results: the same analytics layer answers both,
// and the primitives and answer shapes are the vocabulary's (core/vocabulary/).
import { LIST_LIMITS, REST_OFFSET_WINDOW } from '../../core/limits.ts';
import { FeeStats } from '../../core/vocabulary/answers.ts';
import { Address, Day, ProtocolName, Signature } from '../../core/vocabulary/primitives.ts';

const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;

/** A primitive of the vocabulary with REST's own description (the rule stays the primitive's). */
const described = <T extends object>(primitive: T, description: string, extra: object = {}) => ({ ...primitive, description, ...extra });
const day = (description: string) => described(Day, description, { examples: ['2025-01-01'] });

export const queryParams = {
  protocol_name: described(ProtocolName, 'Protocol identifier, e.g. jupiter_v6 (GET /api/v1/stats lists them)'),
  program_id: described(Address, 'Program id (Base58)'),
  signature: described(Signature, 'Transaction signature (Base58)'),
  date_from: day('First day, YYYY-MM-DD, inclusive, UTC (from 00:00:00)'),
  date_to: day('Last day, YYYY-MM-DD, inclusive, UTC (until 23:59:59)'),
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: LIST_LIMITS.restTransactions.max,
    default: LIST_LIMITS.restTransactions.default,
    description: `Rows per page, 1-${LIST_LIMITS.restTransactions.max}`,
  },
  offset: { type: 'integer', minimum: 0, default: 0, description: `Rows to skip; offset + limit is at most ${REST_OFFSET_WINDOW}` },
  granularity: { type: 'string', enum: ['hour', 'day'], default: 'hour', description: 'Bucket size' },
} as const;

export const errorBody = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Every error answer: a short title and a message naming the cause (and the parameter, when one is at fault)',
  required: ['error', 'message'],
  properties: { error: str, message: str },
} as const;

export const meta = {
  type: 'object',
  description: 'Paging and the range the answer covers',
  properties: {
    limit: int,
    offset: int,
    count: { type: 'integer', description: 'Items in data (1 for a single object)' },
    total: { type: 'integer', description: 'All matching records, where cheap to know (views)' },
    protocolName: { type: ['string', 'null'] },
    dateFrom: { type: ['string', 'null'] },
    dateTo: { type: ['string', 'null'] },
    granularity: str,
    blockTime: {
      type: 'object',
      description: 'The day range as Unix seconds, inclusive (the JSON-RPC blockTime filter)',
      properties: { gte: { type: ['integer', 'null'] }, lte: { type: ['integer', 'null'] } },
    },
  },
} as const;

// Answer shapes come from the vocabulary, where their types are derived from them.
export { ActivityBucket as activityBucket, GlobalStats as globalStats, ProtocolStats as protocolStats, Transaction as transaction } from '../../core/vocabulary/answers.ts';

/** The fee answer: the overall statistics and the same per protocol. */
export const feeAnswer = {
  type: 'object',
  required: [...FeeStats.required ?? [], 'protocols'],
  properties: {
    ...FeeStats.properties,
    protocols: { type: 'array', items: FeeStats, description: 'The same statistics per protocol' },
  },
} as const;

/** The success envelope around a data schema. */
export function envelope(data: object, description: string) {
  return {
    description,
    type: 'object',
    required: ['success', 'data', 'meta'],
    properties: { success: { type: 'boolean', const: true }, data, meta },
  } as const;
}

/** Error answers a route may give, all with the same body. */
export function errors(...codes: number[]) {
  const text: Record<number, string> = {
    400: 'Invalid parameter (the message names it)',
    401: 'API key missing',
    403: 'API key invalid, inactive or revoked',
    404: 'Not found',
    408: 'Query time-out',
    429: 'Rate limit exceeded',
    500: 'Internal error',
  };
  return Object.fromEntries(codes.map((c) => [c, { description: text[c] ?? 'Error', $ref: 'ErrorBody#' }]));
}
