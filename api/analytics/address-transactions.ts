// Transactions of one address (DESIGN: an address matches a record when it is one of its
// accounts or its program_id). tx_by_address_v2 holds one row per (address, record) in
// (address hash, rid) order (migration 110), rid being the record's time-ordered id, so an
// address's history is one key range in ledger order, read forwards or backwards; a page's
// records come from tx_by_rid in the same statement.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { SIGNATURE_RECORDS, unpackSignatureRecord } from '../../warehouse/signature-records.ts';
import { commonConditions, type Conditions } from './question/model.ts';
import { listingFingerprint, type PageTokens } from './page-token.ts';
import { toTransaction } from './transactions.ts';
import { isUInt64Text } from './uint64-text.ts';
import type { AddressTransaction, Page, SortOrder, TransactionFilters } from './types.ts';

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

// [TAG, rid (decimal UInt64: "slot:position" packed, ingest/record-id.ts), fingerprint of
// (address, filters, sortOrder)]. The tag keeps tokens of other listings out, and tokens of
// the layout before 110 ('a2': time, signature hash, instruction index) too: they are refused
// as any token this method did not issue (invalid params), and the client starts again.
const TAG = 'a3';

const fingerprintOf = (req: AddressListRequest): string =>
  listingFingerprint({ address: req.address, filters: req.filters, sortOrder: req.sortOrder });

/**
 * The token of a page starting after the record `rid`: what a previous page would have
 * returned (benchmarks use it to start at random places).
 */
export function addressCursorToken(tokens: PageTokens, req: AddressListRequest, rid: string): string {
  return tokens.encode([TAG, rid, fingerprintOf(req)]);
}

function decode(tokens: PageTokens, token: string, req: AddressListRequest): string {
  return tokens.decode(token, TAG, fingerprintOf(req), (v) => (v.length === 1 && isUInt64Text(v[0]) ? v[0] : undefined));
}

/**
 * Refuse a token that is not one this listing issued, even where the answer does not use
 * it (a count): a bad token is always the caller's mistake, never silently ignored.
 */
export function checkAddressToken(tokens: PageTokens, req: AddressListRequest & { cursor: string }): void {
  decode(tokens, req.cursor, req);
}

/**
 * Conditions on tx_by_address_v2: every filter is answered by its own columns, so a page's
 * LIMIT counts only matching rows (a filter never shortens a page). A signatures filter
 * keeps the ids whose record has one of the signatures: the slots of those signatures
 * (tx_by_signature_v3), then those slots' records in tx_by_rid, compared by signature.
 */
function addressConditions(address: string, filters: AddressFilters, visible: readonly string[]): Conditions {
  const common = commonConditions(filters, visible);
  // 128 bits of sipHash: no address text is stored, so no two addresses may share a key.
  const where = ['address_key = reinterpretAsUInt128(sipHash128({addr:String}))', ...common.where];
  const params: Record<string, unknown> = { addr: address, ...common.params };
  if (filters.signatures) {
    where.push(`rid IN (SELECT rid FROM ${TABLES.txByRid}
      WHERE intDiv(rid, 1073741824) IN (SELECT slot FROM ${SIGNATURE_RECORDS}
        WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)}))) AND signature IN {sigs:Array(String)})
        AND JSONExtractString(toValidUTF8(record), 1) IN {sigs:Array(String)})`);
    params.sigs = filters.signatures;
  }
  return { where, params };
}

/** One address row of a page (its ordinal k in the read) joined to a record stored under its id ('' when none is). */
interface IdRow {
  rid: string;
  k: string;
  bt: number;
  program_id: string;
  protocol_name: string;
  success: boolean;
  record: string;
}

/**
 * One page of an address's records in id order (ledger order: slot, position in the block,
 * instruction index), as ONE statement: the page's ids, a short range of the address's rows
 * (LIMIT page + 1, the one past the page telling whether there is a next), joined to their
 * records by id in tx_by_rid. A busy address's records are close in ledger order, so they
 * share granules (bench/RESULTS.md, "Time-ordered record id (issue 37)").
 *
 * The keyset cursor is the last served id: strictly after it, on the table's own key, so
 * records landing meanwhile are either ahead (served later) or behind (never), and no record
 * is skipped or repeated whatever the filters drop. An address row whose record is not
 * stored (the tables are filled by one insert but commit separately; a crash between them
 * leaves one without the other) is passed over: it neither shows nor shortens the page
 * (another statement reads on, which only that case needs). Two records may share an id
 * only when a producer sent the same transaction_index for two transactions of a slot
 * (docs/ingest-record-id.md): a record is served for an address row when it agrees with
 * it on time, program, protocol and status, the records of one id together (by signature),
 * and a page never ends inside an id.
 */
export async function listAddressTransactions(wh: Warehouse, tokens: PageTokens, req: AddressListRequest, visible: readonly string[]): Promise<Page<AddressTransaction>> {
  if (visible.length === 0) return { data: [], next: null };
  const built = addressConditions(req.address, req.filters, visible);
  const asc = req.sortOrder === 'asc';
  const dir = asc ? 'ASC' : 'DESC';
  const read = (where: string[], params: Record<string, unknown>, limit: boolean) => {
    const rows = `SELECT rid, block_time, program_id, protocol_name, success FROM ${TABLES.txByAddress}
      WHERE ${where.join(' AND ')} ORDER BY rid ${dir}${limit ? ' LIMIT {lim:UInt32}' : ''}`;
    return wh.query<IdRow>(
      `SELECT toString(a.rid) AS rid, toString(a.k) AS k, toUInt32(a.block_time) AS bt, a.program_id AS program_id,
              a.protocol_name AS protocol_name, a.success AS success, r.record AS record
       FROM (SELECT *, rowNumberInAllBlocks() AS k FROM (${rows})) AS a
       LEFT JOIN (SELECT rid, record FROM ${TABLES.txByRid} WHERE rid IN (SELECT rid FROM (${rows}))) AS r ON r.rid = a.rid
       ORDER BY a.rid ${dir}, a.k`,
      // One thread: a page is two short ranges, and the second core serves other requests.
      { params, settings: { max_threads: 1, join_use_nulls: 0 } },
    );
  };
  const out: AddressTransaction[] = [];
  let position = req.cursor === undefined ? undefined : decode(tokens, req.cursor, req);
  for (;;) {
    const need = req.limit - out.length;
    const bound = position === undefined ? built.where : [...built.where, `rid ${asc ? '>' : '<'} {after:UInt64}`];
    const params = { ...built.params, lim: need + 1, ...(position === undefined ? {} : { after: position }) };
    let groups = byId(await read(bound, params, true));
    const refs = groups.reduce((n, g) => n + g.refs, 0);
    // The read went past the page: its last id may be cut by the LIMIT, so it starts the
    // next page; unless it is the only one (an id with more rows than the page), read whole.
    if (refs > need) groups = groups.length > 1 ? groups.slice(0, -1) : byId(await read([...bound, 'rid = {only:UInt64}'], { ...params, only: groups[0]!.rid }, false));
    let used = 0;
    for (const g of groups) {
      if (out.length >= req.limit) break;
      used += 1;
      position = g.rid;
      out.push(...g.records);
    }
    if (used < groups.length || (refs > need && out.length >= req.limit)) return { data: out, next: addressCursorToken(tokens, req, position!) };
    if (refs <= need) return { data: out, next: null };
  }

  /** Rows by id, in read order: how many address rows each id has, and its records that agree with one of them, by signature. */
  function byId(rows: IdRow[]): { rid: string; refs: number; records: AddressTransaction[] }[] {
    const groups: { rid: string; refs: number; records: AddressTransaction[] }[] = [];
    let ks = new Set<string>();
    let rs = new Set<string>();
    let refs: IdRow[] = [];
    const close = (): void => {
      const g = groups.at(-1);
      if (g === undefined) return;
      g.refs = ks.size;
      for (const text of rs) {
        const r = unpackSignatureRecord(text);
        if (!refs.some((a) => Number(a.bt) === Number(r.block_time) && a.program_id === r.program_id
          && a.protocol_name === r.protocol_name && Boolean(a.success) === Boolean(r.success))) continue;
        g.records.push({ ...toTransaction(r), instructionIndex: Number(r.instruction_index) });
      }
      g.records.sort((x, y) => (x.signature < y.signature ? -1 : x.signature > y.signature ? 1 : 0) * (asc ? 1 : -1));
    };
    for (const row of rows) {
      if (groups.at(-1)?.rid !== row.rid) {
        close();
        groups.push({ rid: row.rid, refs: 0, records: [] });
        ks = new Set();
        rs = new Set();
        refs = [];
      }
      if (!ks.has(row.k)) {
        ks.add(row.k);
        refs.push(row);
      }
      if (row.record !== '') rs.add(row.record);
    }
    close();
    return groups;
  }
}

/** How many records of the address match the filters (no paging). */
export async function countAddressTransactions(wh: Warehouse, address: string, filters: AddressFilters, visible: readonly string[]): Promise<number> {
  if (visible.length === 0) return 0;
  const built = addressConditions(address, filters, visible);
  const rows = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.txByAddress} WHERE ${built.where.join(' AND ')}`, { params: built.params });
  return Number(rows[0]?.n ?? 0);
}
