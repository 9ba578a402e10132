// The answers the facade prepares (Analytics.prepare), keyed by operation: each takes its
// checked request (the protocols the one check resolved beside what was asked) and builds its
// statements once, to be costed and then run as the same objects. One table instead of a
// method per answer, so adding an answer is one entry here and one in PreparedOps; the doors
// ask every one the same way. No helper imports the facade: what it lends is PrepareDeps.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import type { CostShape } from './cost/analytics-cost.ts';
import { NO_EXTRAS, type ConnectionPage, type ConnectionWants } from './paging/connection.ts';
import { prepareGroupConnection } from './paging/group-connection.ts';
import type { PageTokens } from './paging/page-token.ts';
import { prepareRecordConnection } from './paging/record-connection.ts';
import {
  failuresQuestion,
  groupsQuestion,
  seriesQuestion,
  toFailurePage,
  toGroupPage,
  toSeries,
  type FailureRequest,
  type Group,
  type GroupPage,
  type GroupPageRequest,
  type Series,
  type SeriesRequest,
} from './presets/group-pages.ts';
import { PRESETS, toStats } from './presets/presets.ts';
import type { Prepared } from './prepared.ts';
import type { AnswerRow, Question } from './question/compile.ts';
import type { QuestionRunner } from './question-runner.ts';
import type { ListRequest, ProtocolStats, TimeRange, Transaction } from './types.ts';

/** Protocol statistics with the count of distinct program ids (GraphQL protocolStats). */
export type ProtocolStatsWithPrograms = ProtocolStats & { uniquePrograms: number };

/** A request the one check passed: `protocols` are those it resolved (the request's own filters keep those asked, a cursor is bound to them). */
export type Checked<R> = R & { readonly protocols: readonly string[] };

/** Each prepared operation: the checked request it takes and the answer it gives. */
export interface PreparedOps {
  /** A page of records as a connection (GraphQL transactions without groupBy). */
  records: { checked: Checked<ListRequest>; answer: ConnectionPage<Transaction> };
  /** A page of groups as a connection (GraphQL transactions(groupBy, metrics)). */
  groups: { checked: Checked<GroupPageRequest>; answer: ConnectionPage<Group> };
  /** Failed records grouped by error message, as a connection (GraphQL failedTransactions). */
  failures: { checked: Checked<FailureRequest>; answer: ConnectionPage<Group> };
  /** A time series; its bucket count was checked by its request's declared rule. */
  series: { checked: Checked<SeriesRequest>; answer: Series[] };
  /** Statistics of each resolved protocol, in that order, with their distinct program ids (protocolStatsList). */
  stats: { checked: Checked<{ range: TimeRange; protocolsAsked?: readonly string[] }>; answer: ProtocolStatsWithPrograms[] };
}

export type PreparedOp = keyof PreparedOps;

/**
 * Execution context beside the checked request, not part of it: what the connection's document
 * selects (its costly extras) and the plan's budget, which an exact count must fit in with the
 * page (else its estimate is given); no limit when absent.
 */
export interface PrepareContext {
  readonly wants?: ConnectionWants;
  readonly budget?: number;
}

/** What the facade's view lends a preparer: its warehouse (bound to the request's budget), token codec and question runner. */
export interface PrepareDeps {
  readonly wh: Warehouse;
  readonly tokens: PageTokens;
  readonly questions: QuestionRunner;
}

/** A connection of groups or of failures (group-connection.ts): the question and the page of its kind. */
function groupConnection<R extends GroupPageRequest | FailureRequest>(
  question: (tokens: PageTokens, req: R, protocols: readonly string[]) => Question,
  page: (tokens: PageTokens, req: R, protocols: readonly string[], rows: readonly AnswerRow[]) => GroupPage,
) {
  return (d: PrepareDeps, c: Checked<R>, { wants = NO_EXTRAS, budget }: PrepareContext): Promise<Prepared<ConnectionPage<Group>>> =>
    prepareGroupConnection(c, wants, question(d.tokens, c, c.protocols), (rows) => page(d.tokens, c, c.protocols, rows), d.questions.groupReads(budget));
}

type Preparers = {
  [K in PreparedOp]: (d: PrepareDeps, checked: PreparedOps[K]['checked'], context: PrepareContext) => Promise<Prepared<PreparedOps[K]['answer']>>;
};

export const PREPARERS: Preparers = {
  async records(d, c, { wants = NO_EXTRAS, budget }) {
    const shape: CostShape = { range: c.filters.range ?? {}, protocolsGiven: c.filters.protocols !== undefined };
    const connection = await prepareRecordConnection(d.wh, d.tokens, c, c.protocols, wants, (statements) => d.questions.fits(statements, shape, budget));
    return { kind: 'prepared', statements: connection.statements, shape, answer: () => connection.answer() };
  },
  groups: groupConnection(groupsQuestion, toGroupPage),
  failures: groupConnection(failuresQuestion, toFailurePage),
  series: async (d, c) => d.questions.prepared(seriesQuestion(c, c.protocols), (rows) => toSeries(c, rows)),
  stats: async (d, c) =>
    d.questions.prepared(PRESETS.stats({ protocols: [...c.protocols], range: c.range, protocolsNamed: c.protocolsAsked !== undefined }, true), (rows) => {
      const byName = new Map(rows.map((r) => [r.protocol, r]));
      return c.protocols.map((p) => ({ ...toStats(p, byName.get(p)), uniquePrograms: (byName.get(p)?.values.programs as number | undefined) ?? 0 }));
    }),
};
