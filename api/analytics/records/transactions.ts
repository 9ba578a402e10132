// Transaction rows and filtered listings from the base table with keyset pagination
// (point lookups by signature are in signature-lookup.ts).
import { MAX_BLOCK_TIME } from '../../../core/limits/questions.ts';
import { BASE58_SIGNATURE, UINT16_MAX } from '../../../core/vocabulary/primitives.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { addFilter, addRanges, commonConditions, type Conditions, type Statement } from '../question/model.ts';
import { fingerprintedFilters, isUInt, listingFingerprint, scanOrder, type PageDirection, type PageTokens } from '../paging/page-token.ts';
import type { ListRequest, Page, SortOrder, Transaction, TransactionFilters } from '../types.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { SIGNATURE_RECORDS, type SignatureRecordRow } from '../../../warehouse/signature-records.ts';
import { decodeSorted, sortedCursorOf, sortedListingStatement } from './sorted-listing.ts';

export const TX_COLUMNS = `signature, instruction_index, toString(slot) AS slot, toUInt32(block_time) AS block_time,
  program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success`;

/** A record as TX_COLUMNS read it: the fields of a stored record (fee as the engine prints a UInt64). */
export type TxRow = Omit<SignatureRecordRow, 'fee'> & { fee: string | number };

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
  listingFingerprint({ filters: fingerprintedFilters(req.filters), sortOrder: req.sortOrder });

export function encodeCursor(tokens: PageTokens, c: Cursor, req: Pick<ListRequest, 'filters' | 'sortOrder'>): string {
  return tokens.encode([TAG, c.blockTime, c.signature, c.instructionIndex, fingerprintOf(req)]);
}

const SIGNATURE = new RegExp(BASE58_SIGNATURE);

/** A cursor of this listing (its filters and sortOrder), whichever way the page goes from it. */
export function decodeCursor(tokens: PageTokens, token: string, req: Pick<ListRequest, 'filters' | 'sortOrder'>, direction: PageDirection = 'forward'): Cursor {
  return tokens.decode(
    token,
    TAG,
    fingerprintOf(req),
    (v) =>
      v.length === 3 && isUInt(v[0], MAX_BLOCK_TIME) && typeof v[1] === 'string' && SIGNATURE.test(v[1]) && isUInt(v[2], UINT16_MAX)
        ? { blockTime: v[0], signature: v[1], instructionIndex: v[2] }
        : undefined,
    direction,
  );
}

/**
 * How a listing's statements read: in `order` (the listing's order, or its reverse for a
 * backward page), from `cursor` (strictly past it, or from it on when `inclusive`), at
 * most `limit` records and one more to tell whether more follow.
 */
export interface Scan {
  order: SortOrder;
  /** A listing sorted by a record column (sortBy) also keys on its row's value of that column. */
  cursor: (Cursor & { value?: number | string }) | undefined;
  inclusive: boolean;
  limit: number;
}

/** The scan of a page of `req`: its cursor decoded (as the argument it came in), its order turned for a backward page. */
export function scanOf(tokens: PageTokens, req: ListRequest): Scan {
  const direction = req.direction ?? 'forward';
  return {
    order: scanOrder(req.sortOrder, direction),
    cursor:
      req.cursor === undefined
        ? undefined
        : req.sortBy !== undefined
          ? decodeSorted(tokens, req.cursor, req, direction)
          : decodeCursor(tokens, req.cursor, req, direction),
    inclusive: false,
    limit: req.limit,
  };
}

// ---- filtered listing -----------------------------------------------------------------

/** WHERE conditions shared by the base table and the records by signature (SIGNATURE_RECORDS: same column names). */
export function filterConditions(
  filters: TransactionFilters,
  visible: readonly string[],
  cursor?: Cursor,
  order: SortOrder = 'desc',
  inclusive = false,
): Conditions {
  const { where, params } = commonConditions(filters, visible);
  addFilter({ where, params }, 'instructionTypes', filters.instructionTypes);
  addRanges({ where, params }, filters.ranges);
  addFilter({ where, params }, 'logMessage', filters.logMessage);
  if (cursor) {
    const op = `${order === 'asc' ? '>' : '<'}${inclusive ? '=' : ''}`;
    // The plain block_time bound lets the primary key prune; the tuple makes it exact.
    where.push(`block_time ${order === 'asc' ? '>' : '<'}= toDateTime({c_bt:UInt32}, 'UTC')`);
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

/** A listing's page, read: its records in the listing's order (a backward page read in reverse, turned back). */
export async function readPage(wh: Warehouse, req: ListRequest, scan: Scan, listing: Listing | undefined): Promise<RowPage> {
  const page = await listRows(wh, scan.limit, listing);
  return scan.order === req.sortOrder ? page : { rows: page.rows.reverse(), more: page.more };
}

const cursorOf = (tokens: PageTokens, r: TxRow, req: ListRequest): string =>
  req.sortBy !== undefined
    ? sortedCursorOf(tokens, { ...r }, { ...req, sortBy: req.sortBy })
    : encodeCursor(tokens, { blockTime: Number(r.block_time), signature: r.signature, instructionIndex: Number(r.instruction_index) }, req);

/**
 * List records matching the filters, ordered by (block_time, signature, instruction_index).
 * `visible` is the set of protocols the caller may see (active ones, narrowed by filters).
 */
export async function listTransactions(wh: Warehouse, tokens: PageTokens, req: ListRequest, visible: readonly string[]): Promise<Page<Transaction>> {
  const scan = scanOf(tokens, req);
  const { rows, more } = await readPage(wh, req, scan, await listingStatements(wh, req, visible, scan));
  const last = rows.at(-1);
  return { data: rows.map(toTransaction), next: more && last ? cursorOf(tokens, last, req) : null };
}

/** Records as connection edges, each with its cursor (which resumes right after, or right before, its record). */
export const toEdges = (tokens: PageTokens, rows: readonly TxRow[], req: ListRequest): { node: Transaction; cursor: string }[] =>
  rows.map((r) => ({ node: toTransaction(r), cursor: cursorOf(tokens, r, req) }));

/**
 * The statements a listing is charged for. The page window is found from the hourly view,
 * which does not see instruction types, program ids, status, ranges or log messages: with them the window may
 * hold too few rows and the listing reads the whole range next, so both are charged.
 */
export function chargedStatements(listing: Listing | undefined, filters: TransactionFilters): Statement[] {
  if (listing === undefined) return [];
  if (listing.windowed === undefined) return [listing.full];
  const thinned =
    filters.instructionTypes !== undefined ||
    filters.programIds !== undefined ||
    filters.status !== undefined ||
    filters.ranges !== undefined ||
    filters.logMessage !== undefined;
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
export async function listingStatements(wh: Warehouse, req: ListRequest, visible: readonly string[], scan: Scan): Promise<Listing | undefined> {
  if (visible.length === 0) return undefined;
  if (req.sortBy !== undefined) {
    // Sorted by a record column: one statement over the whole range (sorted-listing.ts).
    const table = req.filters.signatures ? SIGNATURE_RECORDS : TABLES.transactions;
    return {
      full: sortedListingStatement({ ...req, sortBy: req.sortBy }, scan, filterConditions(req.filters, visible), TX_COLUMNS, table),
      windowed: undefined,
    };
  }
  const { cursor, limit } = scan;
  const dir = scan.order === 'asc' ? 'ASC' : 'DESC';
  const order = `ORDER BY block_time ${dir}, signature ${dir}, instruction_index ${dir}`;
  const built = filterConditions(req.filters, visible, cursor, scan.order, scan.inclusive);

  if (req.filters.signatures) {
    // Signature filters are point reads on the lookup table, whatever else is asked.
    built.where.push('sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))');
    addFilter(built, 'signatures', req.filters.signatures);
    return {
      full: {
        sql: `SELECT ${TX_COLUMNS} FROM ${SIGNATURE_RECORDS} WHERE ${built.where.join(' AND ')} ${order} LIMIT {lim:UInt32}`,
        params: { ...built.params, lim: limit + 1 },
      },
      windowed: undefined,
    };
  }

  // Narrow the scan to the most recent (or oldest) hours that can hold a page, using the
  // hourly view's counts; widen to the whole range only if other filters thin it out.
  const window = await pageWindow(wh, req.filters, visible, scan);
  const statement = (extra: string | undefined): Statement => ({
    sql: `SELECT ${TX_COLUMNS} FROM ${TABLES.transactions} WHERE ${[...built.where, ...(extra ? [extra] : [])].join(' AND ')}
       ${order} LIMIT {lim:UInt32}`,
    params: { ...built.params, lim: limit + 1, win: window },
  });
  const bound = scan.order === 'asc' ? "block_time < toDateTime({win:UInt32}, 'UTC')" : "block_time >= toDateTime({win:UInt32}, 'UTC')";
  return { full: statement(undefined), windowed: window === undefined ? undefined : statement(bound) };
}

/** The rows of a listing in its scan order: the windowed statement, and the full one when the window held too few. */
async function listRows(wh: Warehouse, limit: number, listing: Listing | undefined): Promise<RowPage> {
  if (listing === undefined) return { rows: [], more: false };
  const run = (s: Statement): Promise<TxRow[]> => wh.query<TxRow>(s.sql, { params: s.params });
  if (listing.windowed !== undefined) {
    const rows = await run(listing.windowed);
    if (rows.length > limit) return cut(rows, limit);
  }
  return cut(await run(listing.full), limit);
}

/**
 * The hour boundary that bounds the next page: for desc, the latest hour H such that hours
 * >= H hold more than `limit` records of the visible protocols (before other filters); for
 * asc, the earliest boundary below which that many lie. Undefined when the view cannot help.
 */
async function pageWindow(wh: Warehouse, filters: TransactionFilters, visible: readonly string[], scan: Scan): Promise<number | undefined> {
  const { cursor } = scan;
  const desc = scan.order === 'desc';
  const where = ['protocol_name IN {visible:Array(String)}'];
  const params: Record<string, unknown> = { visible, need: scan.limit + 1 };
  const lo = filters.range?.gte;
  let hi = filters.range?.lte;
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
