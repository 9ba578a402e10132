// Pages of groups (GraphQL transactions with groupBy/metrics, failedTransactions) as
// connections: the page's question, the probe of the end it starts from (when asked and the
// page starts at a cursor: the question read the other way from the cursor, its position
// included, one group), and the count of every group (when asked). Each is compiled once,
// costed with the others, then run. Group counts read the same view rows as the page (and
// its ragged edges), so they are always exact and never estimated.
import { pageFlags, type ConnectionPage, type ConnectionWants } from './connection.ts';
import type { ConnectionRead, Group, GroupPage } from './group-pages.ts';
import type { CostShape } from './analytics-cost.ts';
import type { PageDirection } from './page-token.ts';
import { compile, costShapeOf, type AnswerRow, type CompiledStatement, type Question } from './question/compile.ts';
import { compileCount } from './question/count.ts';
import type { Statement } from './question/model.ts';

export interface GroupConnectionRequest {
  direction?: PageDirection;
  cursor?: string;
}

/** How the analytics layer reads: a compiled question's rows, a count statement's number (both cached there). */
export interface GroupReads {
  rows(q: Question, statement: CompiledStatement | undefined): Promise<AnswerRow[]>;
  count(statement: Statement): Promise<number>;
}

/** The facade's Prepared answer, spelled here (helpers do not import the facade). */
export interface PreparedGroups {
  kind: 'prepared';
  statements: readonly Statement[];
  shape: CostShape;
  answer(): Promise<ConnectionPage<Group>>;
}

export function prepareGroupConnection(
  req: GroupConnectionRequest,
  wants: ConnectionWants,
  question: (read: ConnectionRead) => Question,
  toPage: (rows: AnswerRow[]) => GroupPage,
  reads: GroupReads,
): PreparedGroups {
  const q = question('page');
  const main = compile(q);
  const probeQ = wants.boundary && req.cursor !== undefined ? question('boundary') : undefined;
  const probe = probeQ === undefined ? undefined : compile(probeQ);
  const count = wants.totalCount ? compileCount(q) : undefined;
  return {
    kind: 'prepared',
    statements: [main, probe, count].filter((s): s is Statement => s !== undefined),
    shape: main?.costShape ?? costShapeOf(q),
    answer: async () => {
      const page = toPage(await reads.rows(q, main));
      const beyond = probeQ === undefined ? false : (await reads.rows(probeQ, probe)).length > 0;
      const n = count === undefined ? 0 : await reads.count(count);
      return {
        edges: page.groups.map((g) => ({ node: g.group, cursor: g.cursor })),
        ...pageFlags(req.direction ?? 'forward', page.more, beyond),
        ...(wants.totalCount ? { totalCount: { value: n, estimated: false } } : {}),
      };
    },
  };
}
