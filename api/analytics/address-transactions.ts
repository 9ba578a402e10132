// Transactions of one address (DESIGN: an address matches a record when it is one of its
// accounts or its program_id). tx_by_address_listing holds one row per (address, record)
// with the fields a listing returns, in (address_key, block_time, sig_key = cityHash64(signature),
// instruction_index) order, so a page is one contiguous key range read forwards or backwards.
// Counts read the narrower references of tx_by_address, in the same order.
import { MAX_BLOCK_TIME } from '../../core/limits.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { addFilter, commonConditions, type Conditions } from './question/model.ts';
import { decodeToken, encodeToken, isUInt, listingFingerprint } from './page-token.ts';
import { toTransaction, TX_COLUMNS, type TxRow } from './transactions.ts';
import type { AddressTransaction, Page, SortOrder, TransactionFilters } from './types.ts';
import { TABLES } from '../../warehouse/tables.ts';

/** Filters of an address listing: the listing filters except instructionTypes. */
export type AddressFilters = Omit<TransactionFilters, 'instructionTypes'>;

export interface AddressListRequest {
  address: string;
  filters: AddressFilters;
  sortOrder: SortOrder;
  limit: number;
  /** Opaque keyset cursor from a previous page of an address listing. */
  cursor?: string;
}

/**
 * Keyset position in an address listing. The signature's hash (not the signature) is the
 * middle key because it is what the address tables sort by, so the cursor is a primary-key bound.
 */
interface AddressCursor {
  blockTime: number;
  sigKey: string;
  instructionIndex: number;
}

// [TAG, blockTime, sigKey (decimal UInt64), instructionIndex, fingerprint of (address,
// filters, sortOrder)]. The tag keeps tokens of other listings (getTransactions) out.
const TAG = 'a2';
const UINT64_MAX = 2n ** 64n - 1n;

const fingerprintOf = (req: AddressListRequest): string =>
  listingFingerprint({ address: req.address, filters: req.filters, sortOrder: req.sortOrder });

function encode(c: AddressCursor, req: AddressListRequest): string {
  return encodeToken([TAG, c.blockTime, c.sigKey, c.instructionIndex, fingerprintOf(req)]);
}

/**
 * The token of a page starting after the record at (blockTime, sigKey, instructionIndex):
 * what a previous page would have returned (benchmarks use it to start at random places).
 */
export function addressCursorToken(req: AddressListRequest, blockTime: number, sigKey: string, instructionIndex: number): string {
  return encode({ blockTime, sigKey, instructionIndex }, req);
}

/** A UInt64 in canonical decimal (no sign, no leading zeros), as toString(sig_key) writes it. */
const isUInt64Text = (v: unknown): v is string => typeof v === 'string' && /^(0|[1-9]\d{0,19})$/.test(v) && BigInt(v) <= UINT64_MAX;

function decode(token: string, req: AddressListRequest): AddressCursor {
  return decodeToken(token, TAG, fingerprintOf(req), (v) =>
    v.length === 3 && isUInt(v[0], MAX_BLOCK_TIME) && isUInt64Text(v[1]) && isUInt(v[2], 65_535)
      ? { blockTime: v[0], sigKey: v[1], instructionIndex: v[2] }
      : undefined);
}

/**
 * Refuse a token that is not one this listing issued, even where the answer does not use
 * it (a count): a bad token is always the caller's mistake, never silently ignored.
 */
export function checkAddressToken(req: AddressListRequest & { cursor: string }): void {
  decode(req.cursor, req);
}

/** Conditions on tx_by_address; every filter except signatures is answered by its own columns. */
function addressConditions(address: string, filters: AddressFilters, visible: readonly string[]): Conditions {
  const common = commonConditions(filters, visible);
  // The hash picks the key range; comparing the address itself rules out a hash collision.
  const where = ['address_key = cityHash64({addr:String})', 'address = {addr:String}', ...common.where];
  const params: Record<string, unknown> = { addr: address, ...common.params };
  if (filters.signatures) {
    // Hash match here; the signature itself is compared after the join.
    where.push('sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))');
    params.sigs = filters.signatures;
  }
  return { where, params };
}

/** Conditions on tx_by_address_listing: the same, but it holds the signature itself. */
function listingConditions(address: string, filters: AddressFilters, visible: readonly string[]): Conditions {
  const built = addressConditions(address, { ...filters, signatures: undefined }, visible);
  addFilter(built, 'signatures', filters.signatures);
  return built;
}

/**
 * The join that turns tx_by_address references into records, for counting with a
 * signatures filter (listings read references and details separately). A reference carries
 * (sig_key, instruction_index); the detail row must also agree on block_time, program,
 * protocol and status, so two signatures sharing a 64-bit hash cannot be mixed up, and
 * with a signatures filter the signature itself must be one of those asked for.
 */
function joined(refs: string, signatures: boolean): string {
  return `SELECT t.signature AS signature, t.instruction_index AS instruction_index, toString(t.slot) AS slot,
      toUInt32(t.block_time) AS block_time, t.program_id AS program_id, t.protocol_name AS protocol_name,
      t.instruction_type AS instruction_type, t.fee AS fee, t.compute_units AS compute_units,
      t.accounts_count AS accounts_count, t.success AS success, toString(a.sig_key) AS sig_key
    FROM (${refs}) AS a
    INNER JOIN (
      SELECT sig_key, signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type,
             fee, compute_units, accounts_count, success
      FROM ${TABLES.txBySignature} WHERE sig_key IN (SELECT sig_key FROM (${refs}))
    ) AS t ON t.sig_key = a.sig_key AND t.instruction_index = a.instruction_index
    WHERE t.block_time = a.block_time AND t.program_id = a.program_id AND t.protocol_name = a.protocol_name
      AND t.success = a.success${signatures ? ' AND t.signature IN {sigs:Array(String)}' : ''}`;
}

/** A listing row as tx_by_address_listing holds it, with its key's signature hash. */
type ListingRow = TxRow & { sk: string };

/**
 * One page of an address's records in (block_time, signature hash, instruction_index) order.
 *
 * One range read of tx_by_address_listing (040), whose rows carry every field a listing
 * returns: no second read of details, and no half-stored record to step around (a row is
 * written whole by one view). 003's narrow references and 100 scattered detail reads from
 * tx_by_signature_v2 cost ~5x more per page (bench/RESULTS.md, "Hot-address history").
 *
 * Records sharing (block_time, sig_key, instruction_index) — two signatures with one
 * 64-bit hash — are served together, ordered by signature, so the keyset cursor, which
 * names that triple, never splits them.
 */
export async function listAddressTransactions(wh: Warehouse, req: AddressListRequest, visible: readonly string[]): Promise<Page<AddressTransaction>> {
  if (visible.length === 0) return { data: [], next: null };
  const cursor = req.cursor === undefined ? undefined : decode(req.cursor, req);
  const built = listingConditions(req.address, req.filters, visible);
  const asc = req.sortOrder === 'asc';
  const dir = asc ? 'ASC' : 'DESC';
  if (cursor) {
    // Strictly after the last record served: a keyset bound on the table's own key, so
    // records landing meanwhile are either ahead of it (served later) or behind (never).
    // The bound on block_time alone says nothing new, but the primary key can use it (the
    // tuple comparison it cannot): a page from the middle of 2.4M records read ~100x the
    // rows without it (123 ms instead of 17 on the 10M store).
    built.where.push(
      `(block_time, sig_key, instruction_index) ${asc ? '>' : '<'} (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_idx:UInt16})`,
      `block_time ${asc ? '>=' : '<='} toDateTime({c_bt:UInt32}, 'UTC')`,
    );
    Object.assign(built.params, { c_bt: cursor.blockTime, c_sk: cursor.sigKey, c_idx: cursor.instructionIndex });
  }
  // One record past the page tells whether there is a next page.
  const read = (where: string[], params: Record<string, unknown>, limit: number | undefined) => wh.query<ListingRow>(
    `SELECT ${TX_COLUMNS}, toString(sig_key) AS sk FROM ${TABLES.addressListing} WHERE ${where.join(' AND ')}
     ORDER BY block_time ${dir}, sig_key ${dir}, instruction_index ${dir}${limit === undefined ? '' : ' LIMIT {lim:UInt32}'}`,
    // One thread: a page is one short range, and the second core serves other requests.
    { params: { ...params, ...(limit === undefined ? {} : { lim: limit }) }, settings: { max_threads: 1 } },
  );
  const rows = await read(built.where, built.params, req.limit + 1);
  let served = rows;
  let more = false;
  if (rows.length > req.limit) {
    more = true;
    // The last group read may be cut by the limit: it starts the next page instead. (Not
    // LIMIT ... WITH TIES, which reads every column of whole blocks: 500 ms a page, not 12.)
    const tail = rows.at(-1)!;
    let k = rows.length - 1;
    while (k > 0 && sameKey(rows[k - 1]!, tail)) k -= 1;
    served = k > 0 ? rows.slice(0, k) : await read(
      [...built.where, '(block_time, sig_key, instruction_index) = (toDateTime({g_bt:UInt32}, \'UTC\'), {g_sk:UInt64}, {g_idx:UInt16})'],
      { ...built.params, g_bt: Number(tail.block_time), g_sk: tail.sk, g_idx: Number(tail.instruction_index) }, undefined);
  }

  const out: ListingRow[] = [];
  for (let i = 0; i < served.length;) {
    // The group of records sharing this key, ordered by signature in the page's direction.
    let j = i + 1;
    while (j < served.length && sameKey(served[j]!, served[i]!)) j += 1;
    out.push(...served.slice(i, j).sort((x, y) => (x.signature < y.signature ? -1 : x.signature > y.signature ? 1 : 0) * (asc ? 1 : -1)));
    i = j;
  }
  const last = out.at(-1);
  return {
    data: out.map((r) => ({ ...toTransaction(r), instructionIndex: Number(r.instruction_index) })),
    next: more && last
      ? encode({ blockTime: Number(last.block_time), sigKey: last.sk, instructionIndex: Number(last.instruction_index) }, req)
      : null,
  };
}

const sameKey = (a: ListingRow, b: ListingRow): boolean =>
  a.sk === b.sk && Number(a.block_time) === Number(b.block_time) && Number(a.instruction_index) === Number(b.instruction_index);

/** How many records of the address match the filters (no paging). */
export async function countAddressTransactions(wh: Warehouse, address: string, filters: AddressFilters, visible: readonly string[]): Promise<number> {
  if (visible.length === 0) return 0;
  const built = addressConditions(address, filters, visible);
  const refs = `SELECT sig_key, instruction_index, block_time, program_id, protocol_name, success FROM ${TABLES.txByAddress}
    WHERE ${built.where.join(' AND ')}`;
  // Only a signatures filter needs the detail rows (to compare the signature itself).
  const sql = filters.signatures === undefined
    ? `SELECT count() AS n FROM (${refs})`
    : `SELECT count() AS n FROM (${joined(refs, true)})`;
  const rows = await wh.query<{ n: string }>(sql, { params: built.params });
  return Number(rows[0]?.n ?? 0);
}
