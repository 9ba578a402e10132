// The shapes the analytics layer answers with; the interfaces map these to their wire forms.
import type { TimeRange } from './time-range.ts';

export type { TimeRange };

export interface ProtocolStats {
  protocolName: string;
  totalTransactions: number;
  successfulTransactions: number;
  failedTransactions: number;
  successRate: number;
  totalFees: number;
  averageFee: number;
  totalComputeUnits: number;
  averageComputeUnits: number;
  averageAccountsCount: number;
  uniqueInstructionTypes: number;
  firstSeen: number;
  lastSeen: number;
}

export interface ActivityBucket {
  timestamp: number;
  date: string;
  hour?: number;
  count: number;
  successCount: number;
  failedCount: number;
  totalFees: number;
  totalComputeUnits: number;
}

export interface InstructionTypeStats {
  instructionType: string;
  protocolName: string;
  count: number;
  successRate: number;
  averageComputeUnits: number;
  averageFee: number;
}

export interface TopProtocol {
  protocolName: string;
  transactionCount: number;
  successRate: number;
  totalFees: number;
}

export interface Transaction {
  signature: string;
  slot: string;
  blockTime: number;
  programId: string;
  protocolName: string;
  instructionType: string;
  fee: number;
  computeUnits: number;
  accountsCount: number;
  success: boolean;
}

export type SortOrder = 'asc' | 'desc';
export type TxStatus = 'succeeded' | 'failed' | 'all';

export interface TransactionFilters {
  blockTime?: TimeRange;
  status?: TxStatus;
  protocols?: string[];
  programIds?: string[];
  instructionTypes?: string[];
  signatures?: string[];
}

export interface ListRequest {
  filters: TransactionFilters;
  sortOrder: SortOrder;
  limit: number;
  /** Opaque keyset cursor from a previous page. */
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  /** Cursor for the next page, or null when this page is the last. */
  next: string | null;
}
