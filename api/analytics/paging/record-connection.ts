// Record listings as connections (GraphQL transactions without groupBy): a page forwards
// or backwards from a cursor, whether records lie beyond the end it starts from, and how
// many records the listing holds.
//
// - A backward page is the forward scan turned round: the same keyset order
//   (block_time, signature, instruction_index) read the other way from the cursor, then
//   reversed, so it holds exactly the records a forward walk holds, in the same order.
// - The end a page starts from is probed by the listing read the other way from its
//   cursor, the cursor's own record included, one record at most (its page window from the
//   hourly view keeps the read short).
// - The count reads the hourly views (exact: counts, success counts, instruction types,
//   ragged edges from the base table) unless a filter they do not keep asks for records:
//   signatures are point reads; programIds (any record-level filter) need the base table.
//   When that read would pass the plan's budget, the count is the views' count of the
//   filters they keep, an upper bound, marked estimated.
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { SIGNATURE_RECORDS } from '../../../warehouse/signature-records.ts';
import { pageFlags, type ConnectionPage, type ConnectionWants, type TotalCount } from './connection.ts';
import { compile, readRows, type Question } from '../question/compile.ts';
import { addFilter, type Statement } from '../question/model.ts';
import { scanOrder, type PageTokens } from './page-token.ts';
import { chargedStatements, filterConditions, listingStatements, readPage, scanOf, toEdges, type Listing, type Scan } from '../records/transactions.ts';
import type { ListRequest, Transaction, TransactionFilters } from '../types.ts';

/** How a listing's records are counted: a statement and how to read its number (none when nothing can match). */
interface CountPlan {
  statement: Statement | undefined;
  read(rows: readonly Record<string, unknown>[]): number;
  estimated: boolean;
}

const NUMBER = (rows: readonly Record<string, unknown>[]): number => Number(rows[0]?.n ?? 0);

/** The count of the filters the hourly views keep (protocols, range, instruction types, status), exact for those. */
function viewCount(filters: TransactionFilters, visible: readonly string[], estimated: boolean): CountPlan {
  const measure = filters.status === 'succeeded' ? 'successCount' : filters.status === 'failed' ? 'failedCount' : 'count';
  const q: Question = {
    measures: [measure],
    filters: {
      protocols: visible,
      range: filters.range ?? {},
      ...(filters.instructionTypes !== undefined ? { instructionTypes: filters.instructionTypes } : {}),
    },
  };
  const statement = compile(q);
  return { statement, read: (rows) => Number(readRows(q, rows)[0]?.values[measure] ?? 0), estimated };
}

/**
 * The count of a listing's records. `exact` false asks for the cheaper figure: the views'
 * count without programIds (an upper bound) where the exact one reads the base table.
 */
export function countPlan(filters: TransactionFilters, visible: readonly string[], exact: boolean): CountPlan {
  if (visible.length === 0) return { statement: undefined, read: () => 0, estimated: false };
  if (filters.signatures !== undefined) {
    const built = filterConditions(filters, visible);
    built.where.push('sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))');
    addFilter(built, 'signatures', filters.signatures);
    return {
      statement: { sql: `SELECT count() AS n FROM ${SIGNATURE_RECORDS} WHERE ${built.where.join(' AND ')}`, params: built.params },
      read: NUMBER,
      estimated: false,
    };
  }
  if (!recordLevel(filters)) return viewCount(filters, visible, false);
  if (!exact) return viewCount(filters, visible, true);
  const built = filterConditions(filters, visible);
  return {
    statement: { sql: `SELECT count() AS n FROM ${TABLES.transactions} WHERE ${built.where.join(' AND ')}`, params: built.params },
    read: NUMBER,
    estimated: false,
  };
}

/** The filters the hourly views keep; any other (programIds today) asks for records. An allow-list: a filter added later counts records until a view keeps it. */
const VIEW_KEPT: ReadonlySet<string> = new Set(['protocols', 'range', 'instructionTypes', 'status']);
const recordLevel = (filters: TransactionFilters): boolean => Object.entries(filters).some(([k, v]) => v !== undefined && !VIEW_KEPT.has(k));

/** Whether an exact count has a cheaper estimate to fall back on (it reads the base table over the range). */
export const countHasEstimate = (filters: TransactionFilters): boolean => filters.signatures === undefined && recordLevel(filters);

/** The scan that probes the end a page starts from: the other way from its cursor, the cursor's record included, one record. */
const boundaryScan = (page: Scan): Scan => ({
  order: scanOrder(page.order, 'backward'),
  cursor: page.cursor,
  inclusive: true,
  limit: 0,
});

/** A record connection's statements, built once: costed, then run. */
export interface RecordConnection {
  statements: Statement[];
  answer(): Promise<ConnectionPage<Transaction>>;
}

/**
 * Prepare a page of `req` with the extras asked. `fits` tells whether statements stay
 * within the plan's budget (it decides between an exact count and its estimate).
 */
export async function prepareRecordConnection(
  wh: Warehouse,
  tokens: PageTokens,
  req: ListRequest,
  visible: readonly string[],
  wants: ConnectionWants,
  fits: (statements: readonly Statement[]) => Promise<boolean>,
): Promise<RecordConnection> {
  const scan = scanOf(tokens, req);
  const listing = await listingStatements(wh, req, visible, scan);
  const probeScan = wants.boundary && scan.cursor !== undefined ? boundaryScan(scan) : undefined;
  const probe: Listing | undefined = probeScan === undefined ? undefined : await listingStatements(wh, req, visible, probeScan);
  const statements = [...chargedStatements(listing, req.filters), ...chargedStatements(probe, req.filters)];
  let count: CountPlan | undefined;
  if (wants.totalCount) {
    count = countPlan(req.filters, visible, true);
    if (count.statement !== undefined && countHasEstimate(req.filters) && !(await fits([...statements, count.statement]))) {
      count = countPlan(req.filters, visible, false);
    }
    if (count.statement !== undefined) statements.push(count.statement);
  }
  return {
    statements,
    async answer() {
      const page = await readPage(wh, req, scan, listing);
      const beyond = probeScan === undefined ? false : (await readPage(wh, req, probeScan, probe)).more;
      let totalCount: TotalCount | undefined;
      if (count !== undefined) {
        const s = count.statement;
        const rows = s === undefined ? [] : await wh.query<Record<string, unknown>>(s.sql, { params: s.params });
        totalCount = { value: count.read(rows), estimated: count.estimated };
      }
      return {
        edges: toEdges(tokens, page.rows, req),
        ...pageFlags(req.direction ?? 'forward', page.more, beyond),
        ...(totalCount === undefined ? {} : { totalCount }),
      };
    },
  };
}
