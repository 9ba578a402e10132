// Transaction rows and filtered listings from the base table with keyset pagination
// (point lookups by signature are in signature-lookup.ts).
import { MAX_BLOCK_TIME } from '../../core/limits.ts';
import { BASE58_SIGNATURE } from '../../core/vocabulary/primitives.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { addFilter, addRanges, commonConditions, type Conditions, type Statement } from './question/model.ts';
import { decodeToken, encodeToken, isUInt, listingFingerprint } from './page-token.ts';
import type { ListRequest, Page, SortOrder, Transaction, TransactionFilters } from './types.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { sortedCursorOf, sortedListingStatement } from './sorted-listing.ts';

export const TX_COLUMNS = `signature, instruction_index, toString(slot) AS slot, toUInt32(block_time) AS block_time,
  program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success`;

export interface TxRow {
  signature: string;
  instruction_index: number;
  slot: string;
  block_time: number;
  program_id: string;
  protocol_name: string;
  instruction_type: string;
  fee: string | number;
  compute_units: number;
  accounts_count: number;
  success: boolean;
}

export function toTransaction(r: TxRow): Transaction {
  return {
    signature: r.signature,
    slot: String(r.slot),
    blockTime: Number(r.block_time),
    programId: r.program_id,
    protocolName: r.protocol_name,
    instructionType: r.instruction_type,
    fee: Number(r.fee),
    computeUnits: Number(r.compute_units),
    accountsCount: Number(r.accounts_count),
    success: Boolean(r.success),
  };
}

// ---- keyset cursor -------------------------------------------------------------------

export interface Cursor {
  blockTime: number;
  signature: string;
  instructionIndex: number;
}

// [TAG, blockTime, signature, instructionIndex, fingerprint of (filters, sortOrder)]
const TAG = 't2';

const fingerprintOf = (req: Pick<ListRequest, 'filters' | 'sortOrder'>): string =>
  listingFingerprint({ filters: req.filters, sortOrder: req.sortOrder });

export function encodeCursor(c: Cursor, req: Pick<ListRequest, 'filters' | 'sortOrder'>): string {
  return encodeToken([TAG, c.blockTime, c.signature, c.instructionIndex, fingerprintOf(req)]);
}

const SIGNATURE = new RegExp(BASE58_SIGNATURE);

export function decodeCursor(token: string, field: string, req: Pick<ListRequest, 'filters' | 'sortOrder'>): Cursor {
  return decodeToken(token, TAG, fingerprintOf(req), (v) =>
    v.length === 3 && isUInt(v[0], MAX_BLOCK_TIME) && typeof v[1] === 'string' && SIGNATURE.test(v[1]) && isUInt(v[2], 65_535)
      ? { blockTime: v[0], signature: v[1], instructionIndex: v[2] }
      : undefined);
}

// ---- filtered listing -----------------------------------------------------------------

/** WHERE conditions shared by the base table and tx_by_signature_v2 (same column names). */
function filterConditions(filters: TransactionFilters, visible: readonly string[], cursor: Cursor | undefined, order: SortOrder): Conditions {
  const { where, params } = commonConditions(filters, visible);
  addFilter({ where, params }, 'instructionTypes', filters.instructionTypes);
  addRanges({ where, params }, filters.ranges);
  addFilter({ where, params }, 'logMessage', filters.logMessage);
  if (cursor) {
    const op = order === 'asc' ? '>' : '<';
    // The plain block_time bound lets the primary key prune; the tuple makes it exact.
    where.push(`block_time ${op}= toDateTime({c_bt:UInt32}, 'UTC')`);
    where.push(`(block_time, signature, instruction_index) ${op} (toDateTime({c_bt:UInt32}, 'UTC'), {c_sig:String}, {c_idx:UInt16})`);
    Object.assign(params, { c_bt: cursor.blockTime, c_sig: cursor.signature, c_idx: cursor.instructionIndex });
  }
  return { where, params };
}

/** One page of rows plus whether more follow (the query asked for one row past the page). */
interface RowPage {
  rows: TxRow[];
  more: boolean;
}

function cut(rows: TxRow[], limit: number): RowPage {
  return { rows: rows.length > limit ? rows.slice(0, limit) : rows, more: rows.length > limit };
}

const cursorOf = (r: TxRow, req: ListRequest): string => (req.sortBy !== undefined
  ? sortedCursorOf({ ...r }, { ...req, sortBy: req.sortBy })
  : encodeCursor({ blockTime: Number(r.block_time), signature: r.signature, instructionIndex: Number(r.instruction_index) }, req));

/**
 * List records matching the filters, ordered by (block_time, signature, instruction_index).
 * `visible` is the set of protocols the caller may see (active ones, narrowed by filters).
 */
export async function listTransactions(wh: Warehouse, req: ListRequest, visible: readonly string[]): Promise<Page<Transaction>> {
  const { rows, more } = await listRows(wh, req, await listingStatements(wh, req, visible));
  const last = rows.at(-1);
  return { data: rows.map(toTransaction), next: more && last ? cursorOf(last, req) : null };
}

/** A page of prepared listing statements with a cursor per record (GraphQL edges): each resumes right after its record. */
export async function listTransactionEdges(wh: Warehouse, req: ListRequest, listing: Listing | undefined): Promise<{ edges: { node: Transaction; cursor: string }[]; more: boolean }> {
  const { rows, more } = await listRows(wh, req, listing);
  return { edges: rows.map((r) => ({ node: toTransaction(r), cursor: cursorOf(r, req) })), more };
}

/**
 * The statements a listing is charged for. The page window is found from the hourly view,
 * which does not see instruction types, program ids, status, ranges or log messages: with them the window may
 * hold too few rows and the listing reads the whole range next, so both are charged.
 */
export function chargedStatements(listing: Listing | undefined, filters: TransactionFilters): Statement[] {
  if (listing === undefined) return [];
  if (listing.windowed === undefined) return [listing.full];
  const thinned = filters.instructionTypes !== undefined || filters.programIds !== undefined || filters.status !== undefined
    || filters.ranges !== undefined || filters.logMessage !== undefined;
  return thinned ? [listing.windowed, listing.full] : [listing.windowed];
}

export interface Listing {
  /** The statement over the whole range, and the narrower one bounded by the page window when the hourly view could find one. */
  full: Statement;
  windowed: Statement | undefined;
}

/**
 * The statements a listing runs: with a page window (the hours that can hold the page, from
 * the hourly view) first, and over the whole range when the window held too few rows. The
 * cost model estimates the same statements (the windowed one when there is one).
 */
export async function listingStatements(wh: Warehouse, req: ListRequest, visible: readonly string[]): Promise<Listing | undefined> {
  if (visible.length === 0) return undefined;
  if (req.sortBy !== undefined) {
    // Sorted by a record column: one statement over the whole range (sorted-listing.ts).
    const table = req.filters.signatures ? TABLES.txBySignature : TABLES.transactions;
    return { full: sortedListingStatement({ ...req, sortBy: req.sortBy }, filterConditions(req.filters, visible, undefined, req.sortOrder), TX_COLUMNS, table), windowed: undefined };
  }
  const cursor = req.cursor === undefined ? undefined : decodeCursor(req.cursor, 'paginationToken', req);
  const dir = req.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const order = `ORDER BY block_time ${dir}, signature ${dir}, instruction_index ${dir}`;
  const built = filterConditions(req.filters, visible, cursor, req.sortOrder);

  if (req.filters.signatures) {
    // Signature filters are point reads on the lookup table, whatever else is asked.
    built.where.push('sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))');
    addFilter(built, 'signatures', req.filters.signatures);
    return {
      full: { sql: `SELECT ${TX_COLUMNS} FROM ${TABLES.txBySignature} WHERE ${built.where.join(' AND ')} ${order} LIMIT {lim:UInt32}`, params: { ...built.params, lim: req.limit + 1 } },
      windowed: undefined,
    };
  }

  // Narrow the scan to the most recent (or oldest) hours that can hold a page, using the
  // hourly view's counts; widen to the whole range only if other filters thin it out.
  const window = await pageWindow(wh, req, visible, cursor);
  const statement = (extra: string | undefined): Statement => ({
    sql: `SELECT ${TX_COLUMNS} FROM ${TABLES.transactions} WHERE ${[...built.where, ...(extra ? [extra] : [])].join(' AND ')}
       ${order} LIMIT {lim:UInt32}`,
    params: { ...built.params, lim: req.limit + 1, win: window },
  });
  const bound = req.sortOrder === 'asc'
    ? "block_time < toDateTime({win:UInt32}, 'UTC')"
    : "block_time >= toDateTime({win:UInt32}, 'UTC')";
  return { full: statement(undefined), windowed: window === undefined ? undefined : statement(bound) };
}

async function listRows(wh: Warehouse, req: ListRequest, listing: Listing | undefined): Promise<RowPage> {
  if (listing === undefined) return { rows: [], more: false };
  const run = (s: Statement): Promise<TxRow[]> => wh.query<TxRow>(s.sql, { params: s.params });
  if (listing.windowed !== undefined) {
    const rows = await run(listing.windowed);
    if (rows.length > req.limit) return cut(rows, req.limit);
  }
  return cut(await run(listing.full), req.limit);
}

/**
 * The hour boundary that bounds the next page: for desc, the latest hour H such that hours
 * >= H hold more than `limit` records of the visible protocols (before other filters); for
 * asc, the earliest boundary below which that many lie. Undefined when the view cannot help.
 */
async function pageWindow(wh: Warehouse, req: ListRequest, visible: readonly string[], cursor: Cursor | undefined): Promise<number | undefined> {
  const desc = req.sortOrder === 'desc';
  const where = ['protocol_name IN {visible:Array(String)}'];
  const params: Record<string, unknown> = { visible, need: req.limit + 1 };
  const lo = req.filters.blockTime?.gte;
  let hi = req.filters.blockTime?.lte;
  let low = lo;
  if (cursor) {
    if (desc) hi = hi === undefined ? cursor.blockTime : Math.min(hi, cursor.blockTime);
    else low = low === undefined ? cursor.blockTime : Math.max(low, cursor.blockTime);
  }
  if (low !== undefined) {
    where.push("hour_start >= toStartOfHour(toDateTime({lo:UInt32}, 'UTC'))");
    params.lo = low;
  }
  if (hi !== undefined) {
    where.push("hour_start <= toDateTime({hi:UInt32}, 'UTC')");
    params.hi = hi;
  }
  const rows = await wh.query<{ edge: number }>(
    // UInt64: the end of the last storable hour (2106-02-07 06:00) is past UInt32 (DateTime arithmetic would wrap).
    `SELECT ${desc ? 'toUInt64(hour_start)' : 'toUInt64(hour_start) + 3600'} AS edge FROM (
       SELECT hour_start, sum(sum(tx_count)) OVER (ORDER BY hour_start ${desc ? 'DESC' : 'ASC'}) AS cum
       FROM ${TABLES.protocolHourly} WHERE ${where.join(' AND ')} GROUP BY hour_start)
     WHERE cum >= {need:UInt64} ORDER BY hour_start ${desc ? 'DESC' : 'ASC'} LIMIT 1`,
    { params },
  );
  const edge = rows[0] ? Number(rows[0].edge) : undefined;
  // An asc window ending past the last storable second bounds nothing.
  return edge !== undefined && edge <= MAX_BLOCK_TIME ? edge : undefined;
}
