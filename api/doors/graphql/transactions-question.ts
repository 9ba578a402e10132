// transactions(filters, pagination, groupBy, metrics, sort) prepared end to end, below the
// doors: its arguments mapped (question-args.ts) onto its declared request, checked by the one check, its one
// statement built by the analytics layer over the protocols the check resolved, and its answer as edges whose nodes carry what the
// vocabulary shows (a record's fields and day; a group's keys and metrics). The GraphQL door
// only costs and runs what this returns: the statement is built once, costed and run as the
// same object, and the request never comes back up to a layer it has left.
import type { Analytics, Prepared } from '../../analytics/analytics.ts';
import { wantsOf, type ConnectionPage, type SelectedExtras } from '../../analytics/paging/connection.ts';
import type { GroupPageRequest, Metric } from '../../analytics/presets/group-pages.ts';
import type { ListRequest, TransactionFilters } from '../../analytics/types.ts';
import { groupFilters, pageOf, type CheckedQuestion } from './checked-question.ts';
import { questionInput, questionName, type Args } from './question-args.ts';
import { KEY_SORTS, keysOf, metricsOf, RECORD_SORTS, type GroupKey, type OpenQuestionDoor, type QuestionVocabulary } from './question-vocabulary.ts';

export type Node = Record<string, unknown>;

/** What transactions(filters, pagination, groupBy, metrics, sort) asks: records, or groups (no keys but metrics: one group of everything). */
export type TransactionsAsk = { kind: 'listing'; request: ListRequest; points: number } | { kind: 'groups'; request: GroupPageRequest; points: number };

/** transactions(...) checked, nothing read: its request, with the protocols the one check resolved. */
export type CheckedTransactions = TransactionsAsk & { protocols: readonly string[] };

/** The request of transactions(...) as the one check gave it. */
type CheckedAsk = CheckedQuestion & { groupBy?: string[]; metrics?: string[]; sort?: { field?: string; direction?: 'ASC' | 'DESC' } };

/**
 * The arguments of transactions(...) checked, all by its declared request (Analytics.check:
 * the days to seconds, the schema, the rules of keys, metrics, sort, page and record
 * filters, the protocol scope); the ask built from the checked request. `field` is the one
 * whose name a refusal gives (queryComplexity asks what transactions would).
 */
export async function checkTransactions(
  a: Analytics,
  args: Args,
  q: OpenQuestionDoor,
  field: 'transactions' | 'queryComplexity' = 'transactions',
): Promise<CheckedTransactions> {
  const more = { groupBy: args.groupBy, metrics: args.metrics, sort: args.sort };
  const c = await a.check(q.requests.transactions, questionInput(field, args, more), questionName);
  return { ...transactionsAsk(c as CheckedAsk, q.vocab), protocols: c.protocols };
}

/** The sort of groups: a metric (default COUNT, or the first metric asked), or a grouped key (the request's rules hold it to one). */
function groupSort(c: CheckedAsk, keys: readonly GroupKey[], metrics: readonly Metric[], vocab: QuestionVocabulary): GroupPageRequest['sort'] {
  const direction = c.sort?.direction === 'ASC' ? 'asc' : 'desc';
  const field = c.sort?.field;
  if (field === undefined) return { metric: metrics.includes('count') ? 'count' : metrics[0]!, direction };
  const metric = vocab.metricOf.get(field);
  if (metric !== undefined) return { metric: metric as Metric, direction };
  return { key: KEY_SORTS[field]!.keys.find((k) => keys.includes(k))!, direction };
}

/** The ask of a checked transactions(...): groups when it names keys or metrics, else records. */
function transactionsAsk(c: CheckedAsk, vocab: QuestionVocabulary): TransactionsAsk {
  const page = pageOf(c);
  const keys = keysOf(c.groupBy, vocab);
  const asked = metricsOf(c.metrics, vocab);
  const cursor = page.cursor ? { cursor: page.cursor } : {};
  const filters = groupFilters(c);
  if (keys.length > 0 || asked.length > 0) {
    const metrics = asked.length > 0 ? asked : (['count'] as Metric[]);
    const sort = groupSort(c, keys, metrics, vocab);
    return { kind: 'groups', request: { filters, keys, metrics, sort, limit: page.limit, direction: page.direction, ...cursor }, points: page.limit };
  }
  // Records: in time order (DATE), or by a record column then time.
  const field = c.sort?.field;
  const recordSort = field === undefined ? undefined : (RECORD_SORTS[field]?.column ?? KEY_SORTS[field]?.record);
  const { range, protocols, instructionTypes, programIds, signatures, status, ranges, logMessage } = filters;
  const listed: TransactionFilters = {
    ...(protocols ? { protocols: [...protocols] } : {}),
    ...(range.gte !== undefined || range.lte !== undefined ? { range } : {}),
    ...(instructionTypes ? { instructionTypes: [...instructionTypes] } : {}),
    ...(programIds ? { programIds: [...programIds] } : {}),
    ...(signatures ? { signatures: [...signatures] } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(ranges ? { ranges } : {}),
    ...(logMessage !== undefined ? { logMessage } : {}),
  };
  const sortOrder = c.sort?.direction === 'ASC' ? 'asc' : 'desc';
  return {
    kind: 'listing',
    request: {
      filters: listed,
      sortOrder,
      ...(recordSort === undefined ? {} : { sortBy: recordSort }),
      limit: page.limit,
      direction: page.direction,
      ...cursor,
    },
    points: page.limit,
  };
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
    const listing = await a.prepare('records', { ...ask.request, protocols: ask.protocols }, { wants, budget });
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
  const groups = await a.prepare('groups', { ...ask.request, protocols: ask.protocols }, { wants, budget });
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
