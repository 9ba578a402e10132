// Record listings sorted by a record column (slot, fee, compute units, accounts count, or
// the names a record carries: protocol, program id, instruction type) rather than by time: one statement over the whole filtered range (no page window: the
// hourly view counts records by hour, which says nothing of where the largest fees are),
// keyset-paged by (column, block_time, signature, instruction_index), with a cursor of its
// own tag bound to the filters, the column and the direction. A backward page (last/before)
// reads the same key the other way from its cursor and is turned back by transactions.ts.
import { MAX_BLOCK_TIME } from '../../../core/limits/questions.ts';
import { BASE58_SIGNATURE, UINT16_MAX } from '../../../core/vocabulary/primitives.ts';
import { SIGNATURE_RECORDS } from '../../../warehouse/signature-records.ts';
import { fingerprintedFilters, isUInt, listingFingerprint, type PageDirection, type PageTokens } from '../paging/page-token.ts';
import { isUInt64Text } from './uint64-text.ts';
import { addFilter, RANGE_FILTERS, type Conditions, type Statement } from '../question/model.ts';
import type { ListingSort, ListRequest } from '../types.ts';

export type { ListingSort };

/**
 * Each sort's column, its parameter type and whether its value is a number. The listing's
 * columns alias slot as text: its number is toUInt64 of it (the same value). Strings sort
 * by their bytes, as the engine orders them, in the ORDER BY and the cursor's tuple alike.
 */
const SORTS: Readonly<Record<ListingSort, { expr: string; column: string; type: string; numeric: boolean }>> = {
  slot: { expr: 'toUInt64(slot)', column: 'slot', type: RANGE_FILTERS.slot.type, numeric: true },
  fee: { expr: 'fee', column: 'fee', type: RANGE_FILTERS.fee.type, numeric: true },
  computeUnits: { expr: 'compute_units', column: 'compute_units', type: RANGE_FILTERS.computeUnits.type, numeric: true },
  accountsCount: { expr: 'accounts_count', column: 'accounts_count', type: RANGE_FILTERS.accountsCount.type, numeric: true },
  protocol: { expr: 'protocol_name', column: 'protocol_name', type: 'String', numeric: false },
  programId: { expr: 'program_id', column: 'program_id', type: 'String', numeric: false },
  instructionType: { expr: 'instruction_type', column: 'instruction_type', type: 'String', numeric: false },
};

// [TAG, value, blockTime, signature, instructionIndex, fingerprint of (filters, sortOrder, sortBy)]
const TAG = 's1';
const SIGNATURE = new RegExp(BASE58_SIGNATURE);

interface SortedCursor {
  value: number | string;
  blockTime: number;
  signature: string;
  instructionIndex: number;
}

/** How the statement reads (transactions.ts's Scan): in `order`, from `cursor` (past it, or from it on when `inclusive`), `limit` rows and one more. */
interface SortedScan {
  order: 'asc' | 'desc';
  cursor: (Omit<SortedCursor, 'value'> & { value?: number | string }) | undefined;
  inclusive: boolean;
  limit: number;
}

const fingerprintOf = (req: ListRequest): string =>
  listingFingerprint({ filters: fingerprintedFilters(req.filters), sortOrder: req.sortOrder, sortBy: req.sortBy });

/** A UInt64 column's cursor value travels as canonical decimal text: slots reach 2^64-1 (ingest takes them as text), past a number's 2^53. */
const wide = (sortBy: ListingSort): boolean => SORTS[sortBy].type === 'UInt64';

/** The cursor resuming right after a row (a 32- or 16-bit column's value as a number, a 64-bit one's as text). */
export function sortedCursorOf(
  tokens: PageTokens,
  r: { block_time: number; signature: string; instruction_index: number } & Record<string, unknown>,
  req: ListRequest & { sortBy: ListingSort },
): string {
  const { column, numeric } = SORTS[req.sortBy];
  const value = wide(req.sortBy) ? String(r[column]) : numeric ? Number(r[column]) : String(r[column]);
  return tokens.encode([TAG, value, Number(r.block_time), r.signature, Number(r.instruction_index), fingerprintOf(req)]);
}

/** A cursor of this sorted listing, whichever way the page goes from it (the direction names the argument in errors). */
export function decodeSorted(tokens: PageTokens, token: string, req: ListRequest, direction: PageDirection = 'forward'): SortedCursor {
  // A string value is bounded by the token's own bound (the codec's); the MAC says we wrote it.
  const numeric = req.sortBy === undefined || SORTS[req.sortBy].numeric;
  // A 64-bit value as text (or as a number below 2^53, as tokens issued before carried it).
  const valueOk = (x: unknown): boolean =>
    (req.sortBy !== undefined && wide(req.sortBy) && isUInt64Text(x)) || (numeric ? isUInt(x, Number.MAX_SAFE_INTEGER) : typeof x === 'string');
  return tokens.decode(
    token,
    TAG,
    fingerprintOf(req),
    (v) =>
      v.length === 4 && valueOk(v[0]) && isUInt(v[1], MAX_BLOCK_TIME) && typeof v[2] === 'string' && SIGNATURE.test(v[2]) && isUInt(v[3], UINT16_MAX)
        ? { value: v[0] as number | string, blockTime: v[1], signature: v[2], instructionIndex: v[3] }
        : undefined,
    direction,
  );
}

/**
 * The one statement of a listing sorted by `req.sortBy`, over `built` (the listing's filter
 * conditions, without a time cursor) from `table` (the base table, or the signature lookup),
 * read as `scan` says: in the listing's order or its reverse (a backward page, turned back
 * by the caller), strictly past its cursor or from it on.
 */
export function sortedListingStatement(
  req: ListRequest & { sortBy: ListingSort },
  scan: SortedScan,
  built: Conditions,
  columns: string,
  table: string,
): Statement {
  const { expr: column, type } = SORTS[req.sortBy];
  const dir = scan.order === 'asc' ? 'ASC' : 'DESC';
  const where = [...built.where];
  const params: Record<string, unknown> = { ...built.params, lim: scan.limit + 1 };
  const c = scan.cursor;
  if (c !== undefined) {
    if (c.value === undefined) throw new Error('sorted listing scan without a sorted cursor');
    const op = `${dir === 'ASC' ? '>' : '<'}${scan.inclusive ? '=' : ''}`;
    where.push(`(${column}, block_time, signature, instruction_index) ${op} ({s_v:${type}}, toDateTime({s_bt:UInt32}, 'UTC'), {s_sig:String}, {s_idx:UInt16})`);
    Object.assign(params, { s_v: c.value, s_bt: c.blockTime, s_sig: c.signature, s_idx: c.instructionIndex });
  }
  if (table === SIGNATURE_RECORDS) {
    where.push('sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))');
    addFilter({ where, params }, 'signatures', req.filters.signatures);
  }
  return {
    sql: `SELECT ${columns} FROM ${table} WHERE ${where.join(' AND ')}
      ORDER BY ${column} ${dir}, block_time ${dir}, signature ${dir}, instruction_index ${dir} LIMIT {lim:UInt32}`,
    params,
  };
}
