// transactions(filters, pagination, groupBy, metrics, sort) prepared end to end, below the
// doors: its arguments checked (question-args.ts), its protocols resolved and its one
// statement built by the analytics layer, and its answer as edges whose nodes carry what the
// vocabulary shows (a record's fields and day; a group's keys and metrics). The GraphQL door
// only costs and runs what this returns: the statement is built once, costed and run as the
// same object, and the request never comes back up to a layer it has left.
import type { Analytics, Prepared } from '../analytics/analytics.ts';
import { wantsOf, type ConnectionPage, type SelectedExtras } from '../analytics/connection.ts';
import { transactionsAsk, type Args } from './question-args.ts';
import type { QuestionVocabulary } from './question-vocabulary.ts';

export type Node = Record<string, unknown>;

/**
 * transactions(...) checked and prepared as a connection page; `points` is how many items its
 * arguments ask for. One function from the arguments to the analytics layer: a request passes
 * the primitives' checks (last, in question-args.ts) and goes straight down, never back up
 * through here. `selected`: the connection's costly fields asked (flags, totalCount);
 * `budget`: the plan's, which an exact totalCount must fit in (else it is estimated).
 */
export async function prepareTransactions(
  a: Analytics,
  args: Args,
  vocab: QuestionVocabulary,
  selected?: SelectedExtras,
  budget?: number,
): Promise<{ prepared: Prepared<ConnectionPage<Node>>; points: number }> {
  const ask = transactionsAsk(args, vocab);
  const wants = wantsOf(selected, ask.request.direction ?? 'forward');
  if (ask.kind === 'listing') {
    const listing = await a.prepareListing(ask.request, wants, budget);
    return {
      points: ask.points,
      prepared: {
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
      },
    };
  }
  const groups = await a.prepareGroups(ask.request, wants, budget);
  return {
    points: ask.points,
    prepared: {
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
    },
  };
}
