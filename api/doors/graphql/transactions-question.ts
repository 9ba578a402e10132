// transactions(filters, pagination, groupBy, metrics, sort) prepared end to end, below the
// doors: its arguments checked (question-args.ts, then its declared request by the one check), its one
// statement built by the analytics layer over the protocols the check resolved, and its answer as edges whose nodes carry what the
// vocabulary shows (a record's fields and day; a group's keys and metrics). The GraphQL door
// only costs and runs what this returns: the statement is built once, costed and run as the
// same object, and the request never comes back up to a layer it has left.
import type { Analytics, Prepared } from '../../analytics/analytics.ts';
import { wantsOf, type ConnectionPage, type SelectedExtras } from '../../analytics/paging/connection.ts';
import { OPEN_QUESTIONS } from '../../catalog/open-questions.ts';
import { graphqlName, scopeInput, transactionsAsk, type Args, type FiltersArg, type TransactionsAsk } from './question-args.ts';
import type { QuestionVocabulary } from './question-vocabulary.ts';

export type Node = Record<string, unknown>;

/** transactions(...) checked, nothing read: its request, with the protocols the one check resolved. */
export type CheckedTransactions = TransactionsAsk & { protocols: readonly string[] };

/**
 * The arguments of transactions(...) checked: the door's own (keys, metrics, sort, pagination,
 * record filters; question-args.ts), then its declared request's by the one check
 * (Analytics.prepare: the days to seconds, the protocol scope).
 */
export async function checkTransactions(a: Analytics, args: Args, vocab: QuestionVocabulary): Promise<CheckedTransactions> {
  const ask = transactionsAsk(args, vocab);
  const checked = await a.prepare(
    { request: OPEN_QUESTIONS.transactions, respond: async (_a, c): Promise<CheckedTransactions> => ({ ...ask(c), protocols: c.protocols }) },
    scopeInput(args.filters as FiltersArg | null | undefined),
    graphqlName,
  );
  return checked.answer();
}

/**
 * A checked transactions(...) prepared as a connection page: its statements built (nothing
 * read but a listing's page window). `selected`: the connection's costly fields asked (flags,
 * totalCount); `budget`: the plan's, which an exact totalCount must fit in (else it is
 * estimated). Both are execution context, beside the checked request.
 */
export async function prepareTransactions(
  a: Analytics,
  ask: CheckedTransactions,
  vocab: QuestionVocabulary,
  selected?: SelectedExtras,
  budget?: number,
): Promise<Prepared<ConnectionPage<Node>>> {
  const wants = wantsOf(selected, ask.request.direction ?? 'forward');
  if (ask.kind === 'listing') {
    const listing = await a.prepareListing(ask.request, ask.protocols, wants, budget);
    return {
      ...listing,
      answer: async () => {
        const page = await listing.answer();
        // A record's node: its fields and its UTC day (a node's hour is the HOUR group key, not a record's hour of day).
        const edges = page.edges.map((e) => ({
          node: { ...e.node, date: new Date(e.node.blockTime * 1000).toISOString().slice(0, 10) } as Node,
          cursor: e.cursor,
        }));
        return { ...page, edges };
      },
    };
  }
  const groups = await a.prepareGroups(ask.request, ask.protocols, wants, budget);
  return {
    ...groups,
    answer: async () => {
      const page = await groups.answer();
      const edges = page.edges.map(({ node: group, cursor }) => {
        // Each grouped key in its field, as the vocabulary shows it; then the metrics.
        const node: Node = { protocolName: group.protocol ?? null, ...group.values };
        // A renamed metric under its current field as well (its older one is the measure's name).
        for (const m of vocab.metrics) if (m.field !== m.measure && group.values[m.measure] !== undefined) node[m.field] = group.values[m.measure];
        for (const k of vocab.groupKeys) {
          const v = group[k.dimension];
          node[k.field] = v === undefined ? null : k.show(v);
        }
        return { node, cursor };
      });
      return { ...page, edges };
    },
  };
}
