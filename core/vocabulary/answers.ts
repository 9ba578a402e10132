// Every answer shape the analytics layer gives, defined once as JSON Schema (TypeBox) with
// its TypeScript type derived from it. REST serialises with these schemas (a field missing
// here would be dropped from REST answers, and now cannot exist in the type either),
// JSON-RPC answers the same objects, GraphQL maps them, the OpenAPI document shows them.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const int = (description?: string) => Type.Integer(description === undefined ? {} : { description });
const num = (description?: string) => Type.Number(description === undefined ? {} : { description });
const str = (description?: string) => Type.String(description === undefined ? {} : { description });
/** `T | null` with a plain `type: [..., 'null']` (faster to serialise than anyOf). */
const nullable = (type: 'string' | 'integer', description?: string) =>
  Type.Unsafe<string | null>({ type: [type, 'null'], ...(description === undefined ? {} : { description }) });
const percent = () => num('Percent 0-100');
const unixSeconds = (description = 'Unix seconds') => int(description);

export const Transaction = Type.Object({
  signature: str(),
  slot: str('Slot number as a string (it can exceed 2^53)'),
  blockTime: unixSeconds(),
  programId: str(),
  protocolName: str(),
  instructionType: str(),
  fee: int('Lamports'),
  computeUnits: int(),
  accountsCount: int(),
  success: Type.Boolean(),
});

/** A record of an address listing: the transaction object and which of its instructions it is
 *  (one transaction can touch an address in several instructions; without it they look alike). */
export const AddressTransaction = Type.Object({
  ...Transaction.properties,
  instructionIndex: int('Position of the instruction in its transaction, from 0: tells apart the records of one transaction'),
});

export const ProtocolStats = Type.Object({
  protocolName: str(),
  totalTransactions: int(),
  successfulTransactions: int(),
  failedTransactions: int(),
  successRate: percent(),
  totalFees: num(),
  averageFee: num(),
  totalComputeUnits: num(),
  averageComputeUnits: num(),
  averageAccountsCount: num(),
  uniqueInstructionTypes: int(),
  firstSeen: unixSeconds('Unix seconds; 0 when there are no records'),
  lastSeen: unixSeconds('Unix seconds; 0 when there are no records'),
});

export const ActivityBucket = Type.Object({
  timestamp: unixSeconds('Bucket start, Unix seconds'),
  date: str('Bucket day, YYYY-MM-DD (UTC)'),
  hour: Type.Optional(int('Hour of day 0-23 (hourly buckets only)')),
  count: int(),
  successCount: int(),
  failedCount: int(),
  totalFees: num(),
  totalComputeUnits: num(),
});

export const InstructionTypeStats = Type.Object({
  instructionType: str(),
  protocolName: str(),
  count: int(),
  successRate: percent(),
  averageComputeUnits: num(),
  averageFee: num(),
});

export const TopProtocol = Type.Object({
  protocolName: str(),
  transactionCount: int(),
  successRate: percent(),
  totalFees: num(),
});

export const ProtocolComparisonItem = Type.Object({
  protocolName: str(),
  totalTransactions: int(),
  successRate: percent(),
  averageFee: num(),
  averageComputeUnits: num(),
  uniqueInstructionTypes: int(),
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
  totalVolume: num('Total fees in lamports over the range (DESIGN section 4)'),
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
  totalTransactions: int(),
  totalFees: num(),
  averageFee: num(),
  minFee: num(),
  maxFee: num(),
  p50Fee: num('Approximate (t-digest)'),
  p95Fee: num('Approximate (t-digest)'),
  p99Fee: num('Approximate (t-digest)'),
});

export const TableStorage = Type.Object({
  table: str(),
  parts: int(),
  bytesOnDisk: num(),
  uncompressedBytes: num(),
});

export const GlobalStats = Type.Object({
  totalTransactions: int(),
  successfulTransactions: int(),
  failedTransactions: int(),
  successRate: percent(),
  totalFees: num(),
  totalComputeUnits: num(),
  averageFee: num(),
  averageComputeUnits: num(),
  protocolCount: int('Active (visible) protocols'),
  protocols: Type.Array(Type.Object({ protocolName: str(), totalTransactions: int() })),
  firstSeen: unixSeconds(),
  lastSeen: unixSeconds(),
  latestSlot: str('Highest slot stored, as a string'),
  storage: Type.Object(
    { bytesOnDisk: num(), uncompressedBytes: num(), tables: Type.Array(TableStorage) },
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
