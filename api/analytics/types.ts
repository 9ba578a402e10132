// The requests the analytics layer takes. Answer shapes and primitives are the
// vocabulary's (core/vocabulary/: schema and type in one), re-exported for its helpers.
import type { SortOrder, TxStatus } from '../../core/vocabulary/primitives.ts';
import type { PageDirection } from './page-token.ts';
import type { TimeRange } from './time-range.ts';

export type { ActivityBucket, AddressTransaction, InstructionTypeStats, ProtocolStats, TopProtocol, Transaction } from '../../core/vocabulary/answers.ts';
export type { SortOrder, TimeRange, TxStatus };

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
  /** Forward (default): the records after `cursor` in sortOrder; backward: the `limit` records right before it (or the last ones without it), still in sortOrder. */
  direction?: PageDirection;
}

export interface Page<T> {
  data: T[];
  /** Cursor for the next page, or null when this page is the last. */
  next: string | null;
}
