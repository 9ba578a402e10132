// JSON Schemas of the positional params of each JSON-RPC method (SPEC "Options objects").
// Every limit and default the SPEC names lives here or in the method table beside it.
// `description` on a pattern doubles as the human rule in error data ("must be ...").
import { MAX_BLOCK_TIME, MIN_BLOCK_TIME } from '../../core/limits.ts';
import { BASE58_ADDRESS, BASE58_SIGNATURE } from '../../ingest/record-schema.ts';

export const LIMITS = {
  transactions: { default: 100, max: 10_000 },
  topProtocols: { default: 10, max: 100 },
  instructionTypes: { default: 100, max: 1_000 },
  failedTransactions: { default: 100, max: 1_000 },
  /** Not in the SPEC: caps that keep one call's SQL parameters bounded. */
  filterList: 100,
  signatureList: 1_000,
} as const;

const signature = { type: 'string', pattern: BASE58_SIGNATURE, description: 'a Base58 signature of 64-88 characters' } as const;
const address = { type: 'string', pattern: BASE58_ADDRESS, description: 'a Base58 address of 32-44 characters' } as const;
const protocolName = { type: 'string', minLength: 1, maxLength: 64 } as const;
/** Whole Unix seconds the store can hold (block_time is UInt32). */
const timestamp = { type: 'number', multipleOf: 1, minimum: MIN_BLOCK_TIME, maximum: MAX_BLOCK_TIME } as const;
const limit = (max: number) => ({ type: 'integer', minimum: 1, maximum: max }) as const;
const list = <T extends object>(items: T, max: number) => ({ type: 'array', minItems: 1, maxItems: max, items }) as const;

/** The shared range filter {gte, lte}, both inclusive Unix seconds. */
const blockTime = {
  type: 'object',
  additionalProperties: false,
  properties: { gte: timestamp, lte: timestamp },
} as const;

const filterProps = {
  blockTime,
  status: { type: 'string', enum: ['succeeded', 'failed', 'all'] },
  protocols: list(protocolName, LIMITS.filterList),
  programIds: list(address, LIMITS.filterList),
  signatures: list(signature, LIMITS.signatureList),
} as const;

const listOptions = {
  sortOrder: { type: 'string', enum: ['asc', 'desc'] },
  limit: limit(LIMITS.transactions.max),
  paginationToken: { type: 'string', minLength: 1, maxLength: 512 },
} as const;

/** Optional options objects also accept null, as JSON-RPC clients often fill unused positions so. */
const optionalObject = { type: ['object', 'null'] } as const;

/** A positional-params schema: `names` label each position in error data. */
export interface ParamsSchema {
  names: readonly string[];
  schema: object;
}

const tuple = (required: number, names: readonly string[], items: readonly object[]): ParamsSchema => ({
  names,
  // A method without params takes an empty array (or none at all).
  schema: items.length === 0
    ? { type: 'array', maxItems: 0 }
    : { type: 'array', items, minItems: required, maxItems: items.length, additionalItems: false },
});

export const PARAM_SCHEMAS = {
  getTransaction: tuple(1, ['signature'], [signature]),
  getTransactions: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: {
      ...listOptions,
      filters: {
        type: 'object',
        additionalProperties: false,
        properties: { ...filterProps, instructionTypes: list({ type: 'string', minLength: 1, maxLength: 128 }, LIMITS.filterList) },
      },
    },
  }]),
  getTransactionsForAddress: tuple(1, ['address', 'options'], [address, {
    ...optionalObject,
    additionalProperties: false,
    properties: {
      ...listOptions,
      transactionDetails: { type: 'string', enum: ['full', 'signatures', 'none'] },
      // No instructionTypes here: SPEC does not list it for this method.
      filters: { type: 'object', additionalProperties: false, properties: filterProps },
    },
  }]),
  getProtocolStats: tuple(1, ['options'], [{
    type: 'object', additionalProperties: false, required: ['protocolName'], properties: { protocolName, blockTime },
  }]),
  getProtocolComparison: tuple(1, ['options'], [{
    type: 'object',
    additionalProperties: false,
    required: ['protocols'],
    properties: { protocols: { ...list(protocolName, LIMITS.filterList), uniqueItems: true }, blockTime },
  }]),
  getProtocolPerformance: tuple(1, ['options'], [{
    type: 'object', additionalProperties: false, required: ['protocolName'], properties: { protocolName, blockTime },
  }]),
  getTopProtocols: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: {
      limit: limit(LIMITS.topProtocols.max),
      sortBy: { type: 'string', enum: ['transactions', 'fees', 'successRate'] },
      blockTime,
    },
  }]),
  getProtocolActivity: tuple(1, ['options'], [{
    type: 'object',
    additionalProperties: false,
    required: ['blockTime'],
    properties: {
      protocolName,
      blockTime: { ...blockTime, required: ['gte', 'lte'] },
      interval: { type: 'string', enum: ['hour', 'day'] },
    },
  }]),
  getInstructionTypes: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: { protocolName, limit: limit(LIMITS.instructionTypes.max), blockTime },
  }]),
  getFailedTransactions: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: { protocolName, programId: address, limit: limit(LIMITS.failedTransactions.max), blockTime },
  }]),
  getProtocols: tuple(0, [], []),
} as const satisfies Record<string, ParamsSchema>;

export type MethodName = keyof typeof PARAM_SCHEMAS;
