// Transactions of one address (DESIGN: an address matches a record when it is one of its
// accounts or its program_id). tx_by_address holds one narrow row per (address, record)
// in (address_key, block_time, sig_key, instruction_index) order, so one address's history
// is a contiguous key range read forwards or backwards; details come from tx_by_signature_v2.
import { MAX_BLOCK_TIME } from '../../core/limits.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { commonConditions, type Conditions } from './filter-conditions.ts';
import { decodeToken, encodeToken, isUInt, listingFingerprint } from './page-token.ts';
import { toTransaction, TX_COLUMNS, type TxRow } from './transactions.ts';
import type { Page, SortOrder, Transaction, TransactionFilters } from './types.ts';
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
 * Keyset position in an address listing. sig_key (not the signature) is the middle key
 * because it is what tx_by_address is sorted by, so the cursor is a primary-key bound.
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

/** A reference to a record, as tx_by_address holds it. */
interface RefRow {
  sk: string;
  instruction_index: number;
  bt: number;
  program_id: string;
  protocol_name: string;
  success: boolean;
}

type DetailRow = TxRow & { sk: string };

/**
 * One page of an address's records in (block_time, signature hash, instruction_index) order.
 *
 * Two reads instead of a join (about half the time: the join read the references twice):
 * the page's references from tx_by_address, then their details from tx_by_signature_v2 by
 * primary key. A reference and a detail row belong together only when they agree on
 * (sig_key, instruction_index, block_time, program, protocol, status), so two signatures
 * sharing a 64-bit hash cannot be mixed up.
 *
 * A reference whose detail row is not visible yet (the lookup tables are filled by one
 * INSERT but commit separately, so a read can fall between them) ends the page before
 * it: the next page starts at that reference again, so no record is skipped.
 */
export async function listAddressTransactions(wh: Warehouse, req: AddressListRequest, visible: readonly string[]): Promise<Page<Transaction>> {
  if (visible.length === 0) return { data: [], next: null };
  const cursor = req.cursor === undefined ? undefined : decode(req.cursor, req);
  const built = addressConditions(req.address, req.filters, visible);
  const asc = req.sortOrder === 'asc';
  const dir = asc ? 'ASC' : 'DESC';
  if (cursor) {
    // Strictly after the last record served: a keyset bound on the table's own key, so
    // records landing meanwhile are either ahead of it (served later) or behind (never).
    built.where.push(`(block_time, sig_key, instruction_index) ${asc ? '>' : '<'} (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_idx:UInt16})`);
    Object.assign(built.params, { c_bt: cursor.blockTime, c_sk: cursor.sigKey, c_idx: cursor.instructionIndex });
  }
  // One reference past the page tells whether there is a next page.
  const refs = await wh.query<RefRow>(
    `SELECT toString(sig_key) AS sk, instruction_index, toUInt32(block_time) AS bt, program_id, protocol_name, success
     FROM ${TABLES.txByAddress} WHERE ${built.where.join(' AND ')}
     ORDER BY block_time ${dir}, sig_key ${dir}, instruction_index ${dir} LIMIT {lim:UInt32}`,
    { params: { ...built.params, lim: req.limit + 1 } },
  );
  if (refs.length === 0) return { data: [], next: null };

  // Keys travel as decimal strings (64-bit values do not fit a JS number); the engine
  // turns them back into UInt64 so the primary key of tx_by_signature_v2 is used.
  const details = await wh.query<DetailRow>(
    `SELECT ${TX_COLUMNS}, toString(sig_key) AS sk FROM ${TABLES.txBySignature}
     WHERE sig_key IN (SELECT arrayJoin(arrayMap(k -> toUInt64(k), {keys:Array(String)})))`,
    { params: { keys: [...new Set(refs.map((r) => r.sk))] } },
  );
  const byRef = new Map<string, DetailRow[]>();
  for (const d of details) {
    const k = `${d.sk}#${Number(d.instruction_index)}`;
    byRef.set(k, [...(byRef.get(k) ?? []), d]);
  }
  const wanted = req.filters.signatures === undefined ? undefined : new Set(req.filters.signatures);

  const out: DetailRow[] = [];
  let consumed: RefRow | undefined; // the last reference fully accounted for
  let more = false;
  for (const [i, ref] of refs.entries()) {
    if (out.length >= req.limit) {
      more = true;
      break;
    }
    const matches = (byRef.get(`${ref.sk}#${Number(ref.instruction_index)}`) ?? []).filter((d) =>
      Number(d.block_time) === Number(ref.bt) && d.program_id === ref.program_id
      && d.protocol_name === ref.protocol_name && Boolean(d.success) === Boolean(ref.success));
    if (matches.length === 0 && i > 0) {
      // Not visible yet: stop here; the next page re-reads this reference.
      more = true;
      break;
    }
    // (A first reference without details is passed over rather than returning an empty
    // page that points at itself, which a client would request forever.)
    const kept = matches
      .filter((d) => wanted === undefined || wanted.has(d.signature))
      .sort((x, y) => (x.signature < y.signature ? -1 : x.signature > y.signature ? 1 : 0) * (asc ? 1 : -1));
    out.push(...kept);
    consumed = ref;
    if (i === refs.length - 1) more = refs.length > req.limit;
  }
  return {
    data: out.map(toTransaction),
    next: more && consumed
      ? encode({ blockTime: Number(consumed.bt), sigKey: consumed.sk, instructionIndex: Number(consumed.instruction_index) }, req)
      : null,
  };
}

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
