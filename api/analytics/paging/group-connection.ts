// Pages of groups (GraphQL transactions with groupBy/metrics, failedTransactions) as
// connections, from the question of a forward page (group-pages.ts: listing order, one row
// past the page, after the cursor):
// - a backward page is that question read the other way (measure and keys reversed) from the
//   cursor, its rows turned back, so it holds exactly the groups a forward walk holds;
// - the end a page starts from (when asked and the page starts at a cursor) is probed by the
//   question read the other way from the page, the cursor's position included, one group;
// - the count of every group (when asked) is the question's own reads, counted
//   (question/count.ts). Over the filters the hourly views keep it costs what the page
//   costs and is exact. When the question also filters on record-level columns (read from
//   the base table) and its count would pass the plan's budget, the count over the filters
//   the views keep is given instead, an upper bound marked estimated (if that fits).
// Each statement is compiled once, costed with the others, then run.
import type { CostShape } from '../cost/analytics-cost.ts';
import { pageFlags, type ConnectionPage, type ConnectionWants, type TotalCount } from './connection.ts';
import type { Group, GroupPage } from '../presets/group-pages.ts';
import { scanOrder, type PageDirection } from './page-token.ts';
import { costShapeOf, statusFromRecords, type AnswerRow, type CompiledStatement, type Question, type QuestionFilters } from '../question/compile.ts';
import type { Statement } from '../question/model.ts';

export interface GroupConnectionRequest {
  direction?: PageDirection;
  cursor?: string;
  limit: number;
}

/** How the analytics layer compiles and reads (with its catalog of measures and its cache), and judges a budget. */
export interface GroupReads {
  compile(q: Question): CompiledStatement | undefined;
  compileCount(q: Question): Statement | undefined;
  rows(q: Question, statement: CompiledStatement | undefined): Promise<AnswerRow[]>;
  count(statement: Statement): Promise<number>;
  /** Whether statements of a question of this shape stay within the plan's budget (always, when no budget is given). */
  fits(statements: readonly Statement[], shape: CostShape): Promise<boolean>;
}

/** The facade's Prepared answer, spelled here (helpers do not import the facade). */
export interface PreparedGroups {
  kind: 'prepared';
  statements: readonly Statement[];
  shape: CostShape;
  answer(): Promise<ConnectionPage<Group>>;
}

/** `q` read the other way: its measure and its keys in reverse. */
function reversed(q: Question): Question {
  const o = q.order ?? { direction: 'asc' as const };
  return { ...q, order: { ...o, direction: scanOrder(o.direction, 'backward'), ...(o.dimensions ? { dimensions: scanOrder(o.dimensions, 'backward') } : {}) } };
}

/** The filters the hourly views keep (an allow-list: a filter added later is record-level until a view keeps it); the status only where no record is read for it. */
const VIEW_KEPT: ReadonlySet<string> = new Set(['protocols', 'range', 'instructionTypes', 'errorPattern', 'status', 'cells', 'protocolsNamed']);

/** `q`'s filters the views keep, or undefined when it has no other. */
function viewFilters(q: Question): QuestionFilters | undefined {
  const kept = (k: string): boolean => VIEW_KEPT.has(k) && !(k === 'status' && statusFromRecords(q.filters, q.dimensions ?? []));
  const entries = Object.entries(q.filters).filter(([, v]) => v !== undefined);
  return entries.every(([k]) => kept(k)) ? undefined : (Object.fromEntries(entries.filter(([k]) => kept(k))) as unknown as QuestionFilters);
}

/** The count of `q`'s groups: exact, or (record-level filters, over budget) over the filters the views keep. */
async function countOf(
  q: Question,
  others: readonly Statement[],
  shape: CostShape,
  reads: GroupReads,
): Promise<{ statement: Statement | undefined; estimated: boolean }> {
  const exact = reads.compileCount(q);
  const kept = viewFilters(q);
  if (exact === undefined || kept === undefined || (await reads.fits([...others, exact], shape))) return { statement: exact, estimated: false };
  const estimate = reads.compileCount({ ...q, filters: kept });
  return estimate !== undefined && (await reads.fits([...others, estimate], shape))
    ? { statement: estimate, estimated: true }
    : { statement: exact, estimated: false };
}

/**
 * Prepare a connection page from `forward`, the question of the forward page (group-pages.ts),
 * and `toPage`, which shapes rows in listing order (one row past the page at the end).
 */
export async function prepareGroupConnection(
  req: GroupConnectionRequest,
  wants: ConnectionWants,
  forward: Question,
  toPage: (rows: AnswerRow[]) => GroupPage,
  reads: GroupReads,
): Promise<PreparedGroups> {
  const backward = req.direction === 'backward';
  const q = backward ? reversed(forward) : forward;
  const main = reads.compile(q);
  const probeBase = backward ? forward : reversed(forward);
  const probeQ = wants.boundary && req.cursor !== undefined ? { ...probeBase, page: { ...probeBase.page, limit: 1, inclusive: true } } : undefined;
  const probe = probeQ === undefined ? undefined : reads.compile(probeQ);
  const statements = [main, probe].filter((s): s is CompiledStatement => s !== undefined);
  const shape = main?.costShape ?? costShapeOf(q);
  const count = wants.totalCount ? await countOf(forward, statements, shape, reads) : undefined;
  return {
    kind: 'prepared',
    statements: [...statements, ...(count?.statement === undefined ? [] : [count.statement])],
    shape,
    answer: async () => {
      const rows = await reads.rows(q, main);
      // A backward page was read from the cursor away: its groups turned back, the row past it kept last.
      const page = toPage(backward ? [...rows.slice(0, req.limit).reverse(), ...rows.slice(req.limit)] : rows);
      const beyond = probeQ === undefined ? false : (await reads.rows(probeQ, probe)).length > 0;
      let totalCount: TotalCount | undefined;
      if (count !== undefined) totalCount = { value: count.statement === undefined ? 0 : await reads.count(count.statement), estimated: count.estimated };
      return {
        edges: page.groups.map((g) => ({ node: g.group, cursor: g.cursor })),
        ...pageFlags(req.direction ?? 'forward', page.more, beyond),
        ...(totalCount === undefined ? {} : { totalCount }),
      };
    },
  };
}
