// JSON Schemas of the REST interface. They drive request validation, response
// serialization (fast-json-stringify drops anything undeclared) and the OpenAPI document.
// Field names of the objects equal the JSON-RPC results: the same analytics layer answers both.

const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;

export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

const date = (description: string) => ({ type: 'string', pattern: DATE_PATTERN, description, examples: ['2025-01-01'] }) as const;

export const queryParams = {
  protocol_name: { type: 'string', minLength: 1, description: 'Protocol identifier, e.g. jupiter_v6 (GET /api/v1/stats lists them)' },
  program_id: { type: 'string', minLength: 1, description: 'Program id (Base58)' },
  signature: { type: 'string', minLength: 1, description: 'Transaction signature (Base58)' },
  date_from: date('First day, YYYY-MM-DD, inclusive, UTC (from 00:00:00)'),
  date_to: date('Last day, YYYY-MM-DD, inclusive, UTC (until 23:59:59)'),
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Rows per page, 1-1000' },
  offset: { type: 'integer', minimum: 0, default: 0, description: 'Rows to skip; offset + limit is at most 10000' },
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

export const transaction = {
  type: 'object',
  properties: {
    signature: str,
    slot: { type: 'string', description: 'Slot number as a string' },
    blockTime: { type: 'integer', description: 'Unix seconds' },
    programId: str,
    protocolName: str,
    instructionType: str,
    fee: { type: 'integer', description: 'Lamports' },
    computeUnits: int,
    accountsCount: int,
    success: { type: 'boolean' },
  },
} as const;

export const protocolStats = {
  type: 'object',
  properties: {
    protocolName: str,
    totalTransactions: int,
    successfulTransactions: int,
    failedTransactions: int,
    successRate: { type: 'number', description: 'Percent 0-100' },
    totalFees: num,
    averageFee: num,
    totalComputeUnits: num,
    averageComputeUnits: num,
    averageAccountsCount: num,
    uniqueInstructionTypes: int,
    firstSeen: { type: 'integer', description: 'Unix seconds; 0 when there are no records' },
    lastSeen: { type: 'integer', description: 'Unix seconds; 0 when there are no records' },
  },
} as const;

export const activityBucket = {
  type: 'object',
  properties: {
    timestamp: { type: 'integer', description: 'Bucket start, Unix seconds' },
    date: str,
    hour: { type: 'integer', description: 'Hour of day 0-23 (hour granularity only)' },
    count: int,
    successCount: int,
    failedCount: int,
    totalFees: num,
    totalComputeUnits: num,
  },
} as const;

export const feeStats = {
  type: 'object',
  properties: {
    protocolName: { type: ['string', 'null'], description: 'null for all protocols together' },
    totalTransactions: int,
    totalFees: num,
    averageFee: num,
    minFee: num,
    maxFee: num,
    p50Fee: { type: 'number', description: 'Approximate (t-digest)' },
    p95Fee: { type: 'number', description: 'Approximate (t-digest)' },
    p99Fee: { type: 'number', description: 'Approximate (t-digest)' },
  },
} as const;

export const feeAnswer = {
  type: 'object',
  properties: {
    ...feeStats.properties,
    protocols: { type: 'array', items: feeStats, description: 'The same statistics per protocol' },
  },
} as const;

export const globalStats = {
  type: 'object',
  properties: {
    totalTransactions: int,
    successfulTransactions: int,
    failedTransactions: int,
    successRate: num,
    totalFees: num,
    totalComputeUnits: num,
    averageFee: num,
    averageComputeUnits: num,
    protocolCount: { type: 'integer', description: 'Active (visible) protocols' },
    protocols: {
      type: 'array',
      items: { type: 'object', properties: { protocolName: str, totalTransactions: int } },
    },
    firstSeen: int,
    lastSeen: int,
    latestSlot: { type: 'string', description: 'Highest slot stored, as a string' },
    storage: {
      type: 'object',
      description: 'From system.parts: the published tables (those SQL can read), their parts and bytes; no row counts (they would include records of protocols not yet available)',
      properties: {
        bytesOnDisk: num,
        uncompressedBytes: num,
        tables: {
          type: 'array',
          items: {
            type: 'object',
            properties: { table: str, parts: int, bytesOnDisk: num, uncompressedBytes: num },
          },
        },
      },
    },
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
