// JSON Schemas of the positional params of each JSON-RPC method (SPEC "Options objects"),
// built from the vocabulary's primitives (core/vocabulary/primitives.ts) and the limits of
// core/limits.ts. `description` on a pattern doubles as the human rule in error data ("must be ...").
import { FILTER_LIST_MAX, LIST_LIMITS, SIGNATURE_LIST_MAX } from '../../core/limits.ts';
import {
  Address as address,
  BlockTimeRange as blockTime,
  InstructionType,
  ProtocolName as protocolName,
  Signature as signature,
  SORT_ORDERS,
  TX_STATUSES,
} from '../../core/vocabulary/primitives.ts';

const limit = (max: number) => ({ type: 'integer', minimum: 1, maximum: max }) as const;
const list = <T extends object>(items: T, max: number) => ({ type: 'array', minItems: 1, maxItems: max, items }) as const;

const filterProps = {
  blockTime,
  status: { type: 'string', enum: TX_STATUSES },
  protocols: list(protocolName, FILTER_LIST_MAX),
  programIds: list(address, FILTER_LIST_MAX),
  signatures: list(signature, SIGNATURE_LIST_MAX),
} as const;

const listOptions = {
  sortOrder: { type: 'string', enum: SORT_ORDERS },
  limit: limit(LIST_LIMITS.transactions.max),
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
        properties: { ...filterProps, instructionTypes: list(InstructionType, FILTER_LIST_MAX) },
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
    properties: { protocols: { ...list(protocolName, FILTER_LIST_MAX), uniqueItems: true }, blockTime },
  }]),
  getProtocolPerformance: tuple(1, ['options'], [{
    type: 'object', additionalProperties: false, required: ['protocolName'], properties: { protocolName, blockTime },
  }]),
  getTopProtocols: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: {
      limit: limit(LIST_LIMITS.topProtocols.max),
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
    properties: { protocolName, limit: limit(LIST_LIMITS.instructionTypes.max), blockTime },
  }]),
  getFailedTransactions: tuple(0, ['options'], [{
    ...optionalObject,
    additionalProperties: false,
    properties: { protocolName, programId: address, limit: limit(LIST_LIMITS.failedTransactions.max), blockTime },
  }]),
  getProtocols: tuple(0, [], []),
} as const satisfies Record<string, ParamsSchema>;

export type MethodName = keyof typeof PARAM_SCHEMAS;
