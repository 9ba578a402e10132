// The shapes of REST answers, as TypeBox schemas: they drive response serialization
// (fast-json-stringify drops anything undeclared), the handlers' types (through the TypeBox
// type provider) and the OpenAPI document. Field names of the data equal the JSON-RPC
// results: the same analytics layer answers both, with the vocabulary's answer shapes.
import { Type, type TSchema } from '@sinclair/typebox';
import { ordered } from '../../../core/request-rules.ts';
import { Int64, INT64 } from '../../../core/vocabulary/primitives.ts';

const int64 = Int64();
const str = Type.String();
/** `T | null` as `type: [..., 'null']` (faster to serialise than anyOf); Unix seconds, so 64-bit. */
const nullableSeconds = Type.Unsafe<number | null>({ type: ['integer', 'null'], format: INT64 });
const nullableStr = Type.Unsafe<string | null>({ type: ['string', 'null'] });

export const errorBody = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Every error answer: a short title and a message naming the cause (and the parameter, when one is at fault)',
  required: ['error', 'message'],
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

export const Meta = Type.Object(
  {
    limit: Type.Optional(int64),
    offset: Type.Optional(int64),
    count: Int64({ description: 'Items in data (1 for a single object)' }),
    total: Type.Optional(Int64({ description: 'All matching records, where cheap to know (views)' })),
    next: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        description: 'Keyset listings: pass it back as cursor for the page after this one; null on the last page',
      }),
    ),
    protocolName: Type.Optional(nullableStr),
    dateFrom: Type.Optional(nullableStr),
    dateTo: Type.Optional(nullableStr),
    granularity: Type.Optional(str),
    blockTime: Type.Optional(
      Type.Object(
        {
          gte: nullableSeconds,
          lte: nullableSeconds,
        },
        { description: 'The day range as Unix seconds, inclusive (the JSON-RPC blockTime filter)' },
      ),
    ),
    stats: Type.Optional(
      Type.Object(
        {
          elapsedMs: int64,
          rowsRead: int64,
          bytesRead: int64,
          cost: int64,
        },
        { description: "The answer's statistics, as in its X-Stats-* headers: time taken (ms), rows and bytes the engine read, cost in the plan's units" },
      ),
    ),
  },
  { description: 'Paging, the range the answer covers, and its statistics' },
);

/** The envelope's `success`: a named enum of one value (the document states it once, as Success). */
const Success = Type.Literal(true, { title: 'Success', description: 'Always true in a success answer (errors are {error, message})' });

/** The success envelope around a data schema. */
export const envelope = <T extends TSchema>(data: T, description: string) => Type.Object({ success: Success, data, meta: Meta }, { description });

/** date_from is not after date_to: a rule between parameters (core/request-rules.ts), run
 *  before the handler and shown as `x-cross-field-rules` (docs/rest-and-sql.md, "Rules a
 *  schema cannot state"); a request that breaks one is 400, naming it. */
export const DAYS_IN_ORDER = ordered('date_from', 'date_to');

/** A success answer (the envelope's `success` is the literal true). */
export const ok = <D, M>(data: D, meta: M) => ({ success: true as const, data, meta });

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
