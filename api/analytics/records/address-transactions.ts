// Transactions of one address (DESIGN: an address matches a record when it is one of its
// accounts or its program_id). tx_by_address_v2 holds one row per (address, record) in
// (address hash, rid) order (migration 110), rid being the record's time-ordered id, so an
// address's history is one key range in ledger order, read forwards or backwards; a page's
// records come from tx_by_rid in the same statement. Every read here asks for literalParams:
// on the embedded transport its values are written into the statement as literals
// (warehouse/literal-params.ts: strings as hex, checked digits), so pages run on the serving
// sessions beside each other rather than in chDB's one process-wide line of bound statements
// (bench/RESULTS.md, "Parameter-free address pages"); a server binds them as always.
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { SIGNATURE_RECORDS, unpackSignatureRecord } from '../../../warehouse/signature-records.ts';
import { commonConditions, type Conditions } from '../question/model.ts';
import { fingerprintedFilters, listingFingerprint, type PageTokens } from '../paging/page-token.ts';
import { toTransaction } from './transactions.ts';
import { isUInt64Text } from './uint64-text.ts';
import type { AddressTransaction, Page, SortOrder, TransactionFilters } from '../types.ts';

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
  listingFingerprint({ address: req.address, filters: fingerprintedFilters(req.filters), sortOrder: req.sortOrder });

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
 * keeps the ids whose record has one of the signatures (SIGNATURE_RECORDS: their ids by the
 * signature index, their records compared by signature, so a hash collision adds none).
 */
function addressConditions(address: string, filters: AddressFilters, visible: readonly string[]): Conditions {
  const common = commonConditions(filters, visible);
  // 128 bits of sipHash: no address text is stored, so no two addresses may share a key.
  const where = ['address_key = reinterpretAsUInt128(sipHash128({addr:String}))', ...common.where];
  const params: Record<string, unknown> = { addr: address, ...common.params };
  if (filters.signatures) {
    where.push(`rid IN (SELECT rid FROM ${SIGNATURE_RECORDS} WHERE signature IN {sigs:Array(String)})`);
    params.sigs = filters.signatures;
  }
  return { where, params };
}

/**
 * One page of an address's records in id order (ledger order: slot, position in the block,
 * instruction index). A full page is ONE statement: the page's records by id from tx_by_rid,
 * `rid IN` the page's ids, a short range of the address's rows (LIMIT page + 1, the one past
 * the page telling whether there is a next). A busy address's records are close in ledger
 * order, so they share granules (bench/RESULTS.md, "Time-ordered record id (issue 37)": the
 * form measured fastest, ~2x a join of the rows to their records).
 *
 * The keyset cursor is the last served id: strictly after it, on the table's own key, so
 * records landing meanwhile are either ahead (served later) or behind (never), and no record
 * is skipped or repeated whatever the filters drop. Two cases read more, and only they:
 * - fewer records than ids asked for: the listing's end, or an address row whose record is
 *   not stored (the tables commit separately; a crash between them leaves one alone), which
 *   is passed over and must not end the listing: the page's ids are read to tell which;
 * - two records under one id (a producer that sent one transaction_index for two
 *   transactions of a slot, docs/ingest-record-id.md): the id's address rows are read, and a
 *   record is served when it agrees with one on time, program, protocol and status.
 * An id's records are served together, by signature, and a page never ends inside an id.
 */
export async function listAddressTransactions(
  wh: Warehouse,
  tokens: PageTokens,
  req: AddressListRequest,
  visible: readonly string[],
): Promise<Page<AddressTransaction>> {
  if (visible.length === 0) return { data: [], next: null };
  const built = addressConditions(req.address, req.filters, visible);
  const asc = req.sortOrder === 'asc';
  const dir = asc ? 'ASC' : 'DESC';
  // One thread: a page is two short ranges, and the second core serves other requests.
  const settings = { max_threads: 1 };
  const reads = { settings, literalParams: true };
  const out: AddressTransaction[] = [];
  let position = req.cursor === undefined ? undefined : decode(tokens, req.cursor, req);
  for (;;) {
    const need = req.limit - out.length;
    const where = position === undefined ? built.where : [...built.where, `rid ${asc ? '>' : '<'} {after:UInt64}`];
    const params = { ...built.params, lim: need + 1, ...(position === undefined ? {} : { after: position }) };
    const ids = `SELECT rid FROM ${TABLES.txByAddress} WHERE ${where.join(' AND ')} ORDER BY rid ${dir} LIMIT {lim:UInt32}`;
    // (Named id, not rid: ORDER BY rid would then sort the text.)
    const rows = await wh.query<{ id: string; record: string }>(
      `SELECT toString(rid) AS id, record FROM ${TABLES.txByRid} WHERE rid IN (${ids}) ORDER BY rid ${dir}`,
      { ...reads, params },
    );
    const records = new Map<string, string[]>();
    for (const r of rows) records.set(r.id, [...(records.get(r.id) ?? []), r.record]);
    // The ids read, in order, and how many address rows they were (the LIMIT counts rows).
    let order = [...records.keys()];
    let read = order.length;
    if (read < need + 1) {
      const all = (await wh.query<{ id: string }>(`SELECT toString(rid) AS id FROM (${ids}) ORDER BY rid ${dir}`, { ...reads, params })).map((r) => r.id);
      order = [...new Set(all)];
      read = all.length;
    }
    const beyond = read > need;
    // The last id read may be cut by the LIMIT: it starts the next page, unless it is the only one.
    const serve = beyond && order.length > 1 ? order.slice(0, -1) : order;
    let used = 0;
    for (const rid of serve) {
      if (out.length >= req.limit) break;
      used += 1;
      position = rid;
      out.push(...(await recordsOf(rid, records.get(rid) ?? [])));
    }
    if (out.length >= req.limit) return { data: out, next: used < order.length || beyond ? addressCursorToken(tokens, req, position!) : null };
    // Short of the page: the end, or ids without records passed over (read on after them).
    if (!beyond) return { data: out, next: null };
  }

  /** An id's records that belong to the address, by signature (more than one only when a producer repeated an id). */
  async function recordsOf(rid: string, texts: readonly string[]): Promise<AddressTransaction[]> {
    let list = texts.map(unpackSignatureRecord);
    if (list.length > 1) {
      const refs = await wh.query<{ bt: number; program_id: string; protocol_name: string; success: boolean }>(
        `SELECT toUInt32(block_time) AS bt, program_id, protocol_name, success FROM ${TABLES.txByAddress} WHERE ${built.where.join(' AND ')} AND rid = {rid:UInt64}`,
        { ...reads, params: { ...built.params, rid } },
      );
      list = list.filter((r) =>
        refs.some(
          (a) =>
            Number(a.bt) === Number(r.block_time) &&
            a.program_id === r.program_id &&
            a.protocol_name === r.protocol_name &&
            Boolean(a.success) === Boolean(r.success),
        ),
      );
      list.sort((x, y) => (x.signature < y.signature ? -1 : x.signature > y.signature ? 1 : 0) * (asc ? 1 : -1));
    }
    return list.map((r) => ({ ...toTransaction(r), instructionIndex: Number(r.instruction_index) }));
  }
}

/** How many records of the address match the filters (no paging). */
export async function countAddressTransactions(wh: Warehouse, address: string, filters: AddressFilters, visible: readonly string[]): Promise<number> {
  if (visible.length === 0) return 0;
  const built = addressConditions(address, filters, visible);
  const rows = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.txByAddress} WHERE ${built.where.join(' AND ')}`, {
    params: built.params,
    literalParams: true,
  });
  return Number(rows[0]?.n ?? 0);
}
