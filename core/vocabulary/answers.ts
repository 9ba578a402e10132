// Every answer shape the analytics layer gives, defined once as JSON Schema (TypeBox) with
// its TypeScript type derived from it. REST serialises with these schemas (a field missing
// here would be dropped from REST answers, and now cannot exist in the type either),
// JSON-RPC answers the same objects, GraphQL maps them, the OpenAPI document shows them.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { HOURS_PER_DAY } from '../limits/questions.ts';
import { Float64, Int64, UINT16_MAX } from './primitives.ts';

const described = (description?: string) => (description === undefined ? {} : { description });
/** Counts, totals, lamports, compute units, bytes: 64-bit (Int64). */
const int64 = (description?: string) => Int64(described(description));
/** A whole number whose stored column bounds it (hour of day, a UInt16 column): fits 32 bits, and says so. */
const bounded = (maximum: number, description?: string) => Type.Integer({ minimum: 0, maximum, ...described(description) });
const num = (description?: string) => Float64(described(description));
const str = (description?: string) => Type.String(described(description));
/** `T | null` with a plain `type: [..., 'null']` (faster to serialise than anyOf). */
const nullable = (type: 'string' | 'integer', description?: string) => Type.Unsafe<string | null>({ type: [type, 'null'], ...described(description) });
const percent = () => num('Percent 0-100');
const unixSeconds = (description = 'Unix seconds') => int64(description);
const lamports = (description = 'Lamports') => int64(description);
/** Hour of day, 0-23 (UTC). */
const LAST_HOUR = HOURS_PER_DAY - 1;

export const Transaction = Type.Object({
  signature: str(),
  slot: str('Slot number as a string (it can exceed 2^53)'),
  blockTime: unixSeconds(),
  programId: str(),
  protocolName: str(),
  instructionType: str(),
  fee: lamports(),
  computeUnits: int64(),
  accountsCount: bounded(UINT16_MAX),
  success: Type.Boolean(),
});

/** A record of an address listing: the transaction object and which of its instructions it is
 *  (one transaction can touch an address in several instructions; without it they look alike). */
export const AddressTransaction = Type.Object({
  ...Transaction.properties,
  instructionIndex: bounded(UINT16_MAX, 'Position of the instruction in its transaction, from 0: tells apart the records of one transaction'),
});

export const ProtocolStats = Type.Object({
  protocolName: str(),
  totalTransactions: int64(),
  successfulTransactions: int64(),
  failedTransactions: int64(),
  successRate: percent(),
  totalFees: lamports('Lamports, summed'),
  averageFee: num(),
  totalComputeUnits: int64(),
  averageComputeUnits: num(),
  averageAccountsCount: num(),
  uniqueInstructionTypes: int64(),
  firstSeen: unixSeconds('Unix seconds; 0 when there are no records'),
  lastSeen: unixSeconds('Unix seconds; 0 when there are no records'),
});

export const ActivityBucket = Type.Object({
  timestamp: unixSeconds('Bucket start, Unix seconds'),
  date: str('Bucket day, YYYY-MM-DD (UTC)'),
  hour: Type.Optional(bounded(LAST_HOUR, 'Hour of day 0-23 (hourly buckets only)')),
  count: int64(),
  successCount: int64(),
  failedCount: int64(),
  totalFees: lamports('Lamports, summed'),
  totalComputeUnits: int64(),
});

export const InstructionTypeStats = Type.Object({
  instructionType: str(),
  protocolName: str(),
  count: int64(),
  successRate: percent(),
  averageComputeUnits: num(),
  averageFee: num(),
});

export const TopProtocol = Type.Object({
  protocolName: str(),
  transactionCount: int64(),
  successRate: percent(),
  totalFees: lamports('Lamports, summed'),
});

export const ProtocolComparisonItem = Type.Object({
  protocolName: str(),
  totalTransactions: int64(),
  successRate: percent(),
  averageFee: num(),
  averageComputeUnits: num(),
  uniqueInstructionTypes: int64(),
});

export const ProtocolPerformance = Type.Object({
  protocolName: str(),
  successRate: percent(),
  averageComputeUnits: num(),
  averageFee: num(),
  p50ComputeUnits: num('Approximate (t-digest)'),
  p95ComputeUnits: num('Approximate (t-digest)'),
  p99ComputeUnits: num('Approximate (t-digest)'),
  averageAccountsCount: num(),
  totalVolume: lamports('Total fees in lamports over the range (DESIGN section 4)'),
});

export const FailedTransaction = Type.Object({
  signature: str(),
  slot: str('Slot number as a string'),
  blockTime: unixSeconds(),
  programId: str(),
  protocolName: str(),
  errorMessage: str(),
  logMessages: str(),
  rawData: str(),
});

export const FeeStats = Type.Object({
  protocolName: nullable('string', 'null for all requested protocols together'),
  totalTransactions: int64(),
  totalFees: lamports('Lamports, summed'),
  averageFee: num(),
  minFee: lamports(),
  maxFee: lamports(),
  p50Fee: num('Approximate (t-digest)'),
  p95Fee: num('Approximate (t-digest)'),
  p99Fee: num('Approximate (t-digest)'),
});

export const TableStorage = Type.Object({
  table: str(),
  parts: int64(),
  bytesOnDisk: int64(),
  uncompressedBytes: int64(),
});

export const GlobalStats = Type.Object({
  totalTransactions: int64(),
  successfulTransactions: int64(),
  failedTransactions: int64(),
  successRate: percent(),
  totalFees: lamports('Lamports, summed'),
  totalComputeUnits: int64(),
  averageFee: num(),
  averageComputeUnits: num(),
  protocolCount: int64('Active (visible) protocols'),
  protocols: Type.Array(Type.Object({ protocolName: str(), totalTransactions: int64() })),
  firstSeen: unixSeconds(),
  lastSeen: unixSeconds(),
  latestSlot: str('Highest slot stored, as a string'),
  storage: Type.Object(
    { bytesOnDisk: int64(), uncompressedBytes: int64(), tables: Type.Array(TableStorage) },
    {
      description:
        'From system.parts: the published tables (those SQL can read), their parts and bytes; no row counts (they would include records of protocols not yet available)',
    },
  ),
});

export type Transaction = Static<typeof Transaction>;
export type AddressTransaction = Static<typeof AddressTransaction>;
export type ProtocolStats = Static<typeof ProtocolStats>;
export type ActivityBucket = Static<typeof ActivityBucket>;
export type InstructionTypeStats = Static<typeof InstructionTypeStats>;
export type TopProtocol = Static<typeof TopProtocol>;
export type ProtocolComparisonItem = Static<typeof ProtocolComparisonItem>;
export type ProtocolPerformance = Static<typeof ProtocolPerformance>;
export type FailedTransaction = Static<typeof FailedTransaction>;
export type FeeStats = Static<typeof FeeStats>;
export type TableStorage = Static<typeof TableStorage>;
export type GlobalStats = Static<typeof GlobalStats>;

/** Every answer shape by name, for documents that list them (OpenAPI components, GraphQL parity tests). */
export const ANSWER_SHAPES: Readonly<Record<string, TSchema>> = {
  Transaction,
  ProtocolStats,
  ActivityBucket,
  InstructionTypeStats,
  TopProtocol,
  ProtocolComparisonItem,
  ProtocolPerformance,
  FailedTransaction,
  FeeStats,
  TableStorage,
  GlobalStats,
};

/** The fee answer: the overall statistics and the same per protocol. */
export const FeeAnswer = Type.Object({ ...FeeStats.properties, protocols: Type.Array(FeeStats, { description: 'The same statistics per protocol' }) });
