// The requests the analytics layer takes. Answer shapes and primitives are the
// vocabulary's (core/vocabulary/: schema and type in one), re-exported for its helpers.
import type { SortOrder, TxStatus } from '../../core/vocabulary/primitives.ts';
import type { PageDirection } from './paging/page-token.ts';

export type { ActivityBucket, AddressTransaction, InstructionTypeStats, ProtocolStats, TopProtocol, Transaction } from '../../core/vocabulary/answers.ts';
export type { SortOrder, TxStatus };

/** Inclusive bounds in Unix seconds; either side may be open. */
export interface TimeRange {
  gte?: number;
  lte?: number;
}

/** Record columns a range filter bounds (question/model.ts RANGE_FILTERS writes their conditions). */
export type RangeFilter = 'slot' | 'fee' | 'computeUnits' | 'accountsCount';
/** Record columns a listing may be sorted by (then by time): those range filters bound, and the three names a record carries. */
export type ListingSort = RangeFilter | 'protocol' | 'programId' | 'instructionType';
/**
 * Inclusive bounds; either side may be left out. Each is a whole number as decimal text: slot
 * and fee are UInt64, past the 2^53 a JSON number (a double) holds exactly, so a bound travels
 * as text from the request to the statement's UInt64 parameter and is compared digit for digit.
 */
export interface Bounds {
  min?: string;
  max?: string;
}

export interface TransactionFilters {
  /** The records' block times (page tokens hash it as `blockTime`: fingerprintedFilters). */
  range?: TimeRange;
  status?: TxStatus;
  protocols?: string[];
  programIds?: string[];
  instructionTypes?: string[];
  signatures?: string[];
  /** Inclusive ranges of record columns (slot, fee, compute units, accounts count). */
  ranges?: Partial<Record<RangeFilter, Bounds>>;
  /** Case-insensitive substring of the record's log messages. */
  logMessage?: string;
}

export interface ListRequest {
  filters: TransactionFilters;
  sortOrder: SortOrder;
  /** A record column to sort by (then by time); by time when absent. */
  sortBy?: ListingSort;
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
