// Transactions of one address (DESIGN: an address matches a record when it is one of its
// accounts or its program_id). tx_by_address holds one narrow reference per (address, record)
// in (address_key, block_time, sig_key = cityHash64(signature), instruction_index) order, so
// an address's history is one contiguous key range read forwards or backwards; a page's
// records come from tx_by_signature_v3 by primary key.
import { MAX_BLOCK_TIME } from '../../core/limits/questions.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { commonConditions, type Conditions } from './question/model.ts';
import { isUInt, listingFingerprint, type PageTokens } from './page-token.ts';
import { toTransaction } from './transactions.ts';
import { isUInt64Text } from './uint64-text.ts';
import type { KeyedRow } from './signature-lookup.ts';
import type { AddressTransaction, Page, SortOrder, TransactionFilters } from './types.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { SIGNATURE_RECORDS } from '../../warehouse/signature-records.ts';
import { UINT16_MAX } from '../../core/vocabulary/primitives.ts';

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

const fingerprintOf = (req: AddressListRequest): string => listingFingerprint({ address: req.address, filters: req.filters, sortOrder: req.sortOrder });

function encode(tokens: PageTokens, c: AddressCursor, req: AddressListRequest): string {
  return tokens.encode([TAG, c.blockTime, c.sigKey, c.instructionIndex, fingerprintOf(req)]);
}

/**
 * The token of a page starting after the record at (blockTime, sigKey, instructionIndex):
 * what a previous page would have returned (benchmarks use it to start at random places).
 */
export function addressCursorToken(tokens: PageTokens, req: AddressListRequest, blockTime: number, sigKey: string, instructionIndex: number): string {
  return encode(tokens, { blockTime, sigKey, instructionIndex }, req);
}

function decode(tokens: PageTokens, token: string, req: AddressListRequest): AddressCursor {
  return tokens.decode(token, TAG, fingerprintOf(req), (v) =>
    v.length === 3 && isUInt(v[0], MAX_BLOCK_TIME) && isUInt64Text(v[1]) && isUInt(v[2], UINT16_MAX)
      ? { blockTime: v[0], sigKey: v[1], instructionIndex: v[2] }
      : undefined,
  );
}

/**
 * Refuse a token that is not one this listing issued, even where the answer does not use
 * it (a count): a bad token is always the caller's mistake, never silently ignored.
 */
export function checkAddressToken(tokens: PageTokens, req: AddressListRequest & { cursor: string }): void {
  decode(tokens, req.cursor, req);
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
      FROM ${SIGNATURE_RECORDS} WHERE sig_key IN (SELECT sig_key FROM (${refs}))
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

/** Reads a page's records by signature key (SignatureLookup.byKeys: coalesced point reads). */
export type RecordsByKey = (keys: readonly string[]) => Promise<KeyedRow[]>;

/**
 * One page of an address's records in (block_time, signature hash, instruction_index) order.
 *
 * Two reads: the page's references, one key range of tx_by_address (003), then their
 * records from tx_by_signature_v3 by primary key, a read shared with concurrent pages and
 * getTransaction lookups (signature-lookup.ts). Migration 060 dropped 040's listing table,
 * which carried the records on every address row: ~450 B a record for a ~3x faster page
 * (bench/RESULTS.md, "Storage diet"). Reading a page dense in time (the hottest address's)
 * from the base table's (protocol, block_time) range instead decompresses a whole 8,192-row
 * granule per protocol, ~2x slower ("The hottest address's page"). A reference and a record belong together only when
 * they agree on (sig_key, instruction_index, block_time, program, protocol, status), so two
 * signatures sharing a 64-bit hash cannot be mixed up.
 *
 * A reference whose record is not stored (the lookup tables are filled by one insert but
 * commit separately; a crash between them leaves one without the other) is passed over:
 * it neither shows nor ends the page. Records sharing (block_time, sig_key,
 * instruction_index) are served together, ordered by signature, so the keyset cursor,
 * which names that triple, never splits them.
 */
export async function listAddressTransactions(
  wh: Warehouse,
  tokens: PageTokens,
  records: RecordsByKey,
  req: AddressListRequest,
  visible: readonly string[],
): Promise<Page<AddressTransaction>> {
  if (visible.length === 0) return { data: [], next: null };
  const asc = req.sortOrder === 'asc';
  const { after, read } = referenceReads(wh, addressConditions(req.address, req.filters, visible), asc);
  const wanted = req.filters.signatures === undefined ? undefined : new Set(req.filters.signatures);

  const out: KeyedRow[] = [];
  let position = req.cursor === undefined ? undefined : decode(tokens, req.cursor, req);
  let more = false;
  // Usually one round; another only when references without records left the page short.
  for (;;) {
    const need = req.limit - out.length;
    const bound = after(position);
    // One reference past the page tells whether there is a next page.
    const refs = await read(bound.where, bound.params, need + 1);
    let served = refs;
    let refsLeft = false;
    if (refs.length > need) {
      refsLeft = true;
      // The last group read may be cut by the limit: it starts the next page instead.
      const tail = refs.at(-1)!;
      let k = refs.length - 1;
      while (k > 0 && sameKey(refs[k - 1]!, tail)) k -= 1;
      served =
        k > 0
          ? refs.slice(0, k)
          : await read(
              [...bound.where, "(block_time, sig_key, instruction_index) = (toDateTime({g_bt:UInt32}, 'UTC'), {g_sk:UInt64}, {g_idx:UInt16})"],
              { ...bound.params, g_bt: Number(tail.bt), g_sk: tail.sk, g_idx: Number(tail.instruction_index) },
              undefined,
            );
    }
    const byRef = byReference(await records([...new Set(served.map((r) => r.sk))]));
    for (let i = 0; i < served.length; ) {
      if (out.length >= req.limit) {
        more = true;
        break;
      }
      // The group of references sharing this key (one, unless two signatures share a hash).
      let j = i + 1;
      while (j < served.length && sameKey(served[j]!, served[i]!)) j += 1;
      const group = served.slice(i, j);
      const ref = group[0]!;
      out.push(...groupRecords(group, byRef, wanted, asc));
      position = { blockTime: Number(ref.bt), sigKey: ref.sk, instructionIndex: Number(ref.instruction_index) };
      i = j;
    }
    if (more || !refsLeft) break;
    if (out.length >= req.limit) {
      more = true;
      break;
    }
  }
  return {
    data: out.map((r) => ({ ...toTransaction(r), instructionIndex: Number(r.instruction_index) })),
    next: more && position ? encode(tokens, position, req) : null,
  };
}

/** The keyset reads of an address's references, in the page's order: a bound after a position, and the read under it. */
function referenceReads(wh: Warehouse, built: Conditions, asc: boolean) {
  const dir = asc ? 'ASC' : 'DESC';
  // Strictly after a position: a keyset bound on the table's own key, so records landing
  // meanwhile are either ahead of it (served later) or behind (never). The bound on
  // block_time alone says nothing new, but the primary key can use it (the tuple comparison
  // it cannot): a page from the middle of 2.4M records read ~100x the rows without it.
  const after = (c: AddressCursor | undefined): Conditions =>
    c === undefined
      ? built
      : {
          where: [
            ...built.where,
            `(block_time, sig_key, instruction_index) ${asc ? '>' : '<'} (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_idx:UInt16})`,
            `block_time ${asc ? '>=' : '<='} toDateTime({c_bt:UInt32}, 'UTC')`,
          ],
          params: { ...built.params, c_bt: c.blockTime, c_sk: c.sigKey, c_idx: c.instructionIndex },
        };
  const read = (where: string[], params: Record<string, unknown>, limit: number | undefined) =>
    wh.query<RefRow>(
      `SELECT toString(sig_key) AS sk, instruction_index, toUInt32(block_time) AS bt, program_id, protocol_name, success
     FROM ${TABLES.txByAddress} WHERE ${where.join(' AND ')}
     ORDER BY block_time ${dir}, sig_key ${dir}, instruction_index ${dir}${limit === undefined ? '' : ' LIMIT {lim:UInt32}'}`,
      // One thread: a page is one short range, and the second core serves other requests.
      { params: { ...params, ...(limit === undefined ? {} : { lim: limit }) }, settings: { max_threads: 1 } },
    );
  return { after, read };
}

/**
 * The records of a group of references sharing one key, ordered by signature: those agreeing
 * with a reference of the group (and named, when signatures are asked), one per signature, at
 * most one per reference.
 */
function groupRecords(group: readonly RefRow[], byRef: Map<string, KeyedRow[]>, wanted: Set<string> | undefined, asc: boolean): KeyedRow[] {
  const ref = group[0]!;
  const matches = (byRef.get(`${ref.sk}#${Number(ref.instruction_index)}`) ?? []).filter(
    (d) =>
      Number(d.block_time) === Number(ref.bt) &&
      group.some((g) => d.program_id === g.program_id && d.protocol_name === g.protocol_name && Boolean(d.success) === Boolean(g.success)) &&
      (wanted === undefined || wanted.has(d.signature)),
  );
  const unique = [...new Map(matches.map((d) => [d.signature, d])).values()].slice(0, group.length);
  return unique.sort((x, y) => (x.signature < y.signature ? -1 : x.signature > y.signature ? 1 : 0) * (asc ? 1 : -1));
}

/** Records by the reference they answer (signature key and instruction index). */
function byReference(rows: readonly KeyedRow[]): Map<string, KeyedRow[]> {
  const byRef = new Map<string, KeyedRow[]>();
  for (const d of rows) {
    const k = `${d.sk}#${Number(d.instruction_index)}`;
    const list = byRef.get(k);
    if (list) list.push(d);
    else byRef.set(k, [d]);
  }
  return byRef;
}

const sameKey = (a: RefRow, b: RefRow): boolean =>
  a.sk === b.sk && Number(a.bt) === Number(b.bt) && Number(a.instruction_index) === Number(b.instruction_index);

/** How many records of the address match the filters (no paging). */
export async function countAddressTransactions(wh: Warehouse, address: string, filters: AddressFilters, visible: readonly string[]): Promise<number> {
  if (visible.length === 0) return 0;
  const built = addressConditions(address, filters, visible);
  const refs = `SELECT sig_key, instruction_index, block_time, program_id, protocol_name, success FROM ${TABLES.txByAddress}
    WHERE ${built.where.join(' AND ')}`;
  // Only a signatures filter needs the detail rows (to compare the signature itself).
  const sql = filters.signatures === undefined ? `SELECT count() AS n FROM (${refs})` : `SELECT count() AS n FROM (${joined(refs, true)})`;
  const rows = await wh.query<{ n: string }>(sql, { params: built.params });
  return Number(rows[0]?.n ?? 0);
}
