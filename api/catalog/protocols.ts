// The catalog's per-protocol aggregates: statistics, comparison, performance, rankings,
// activity over time, instruction types, fees, the protocol list and whole-store figures.
// Each is declared once; its doors are derived (api/catalog/catalog.ts).
import { Type } from '@sinclair/typebox';
import { LIST_LIMITS, MAX_ACTIVITY_BUCKETS } from '../../core/limits/questions.ts';
import { FILTER_LISTS } from '../../core/vocabulary/primitives.ts';
import {
  ActivityBucket,
  FeeAnswer,
  GlobalStats,
  InstructionTypeStats,
  ProtocolComparisonItem,
  ProtocolPerformance,
  ProtocolStats,
  TopProtocol,
} from '../../core/vocabulary/answers.ts';
import { GRANULARITIES } from '../analytics/question/granularity.ts';
import { request } from '../../core/request-check.ts';
import { bucketsAtMost } from './open-questions.ts';
import { declared } from './declared.ts';
import type { TimeRange } from '../analytics/types.ts';
import { operation, stringEnum, withDefault, type Operation } from './declare.ts';
import { blockTime, ClosedBlockTime, limit, list, options, ProtocolName, query, strict } from './params.ts';

// Requests declared door-neutral (declared.ts): `protocol` is JSON-RPC's protocolName, `range` its blockTime.
const ComparisonRequest = options(
  {
    protocols: { ...list(FILTER_LISTS.protocols.item, FILTER_LISTS.protocols.max, 'Protocol identifiers, each once'), uniqueItems: true },
    range: blockTime,
  },
  'getProtocolComparison options',
);
const PerformanceRequest = options({ protocol: ProtocolName, range: blockTime }, 'getProtocolPerformance options');
const StatsRequest = options({ protocol: ProtocolName, range: blockTime }, 'getProtocolStats options');
const TopRequest = options(
  {
    limit: limit(LIST_LIMITS.topProtocols),
    sortBy: withDefault(
      stringEnum(['transactions', 'fees', 'successRate'], 'transactions, fees or successRate (default transactions)', 'TopProtocolsSortBy'),
      'transactions',
    ),
    range: blockTime,
  },
  'getTopProtocols options',
);
const ActivityRequest = options(
  {
    protocol: Type.Optional(ProtocolName),
    range: ClosedBlockTime,
    interval: withDefault(
      stringEnum(
        GRANULARITIES,
        'hour, day, week (ISO weeks, from Monday 00:00 UTC) or month (UTC) (default hour); only hour buckets have an hour field',
        'Granularity',
      ),
      'hour',
    ),
  },
  'getProtocolActivity options (protocolName omitted: all protocols)',
);
const InstructionTypeRequest = options(
  {
    protocol: Type.Optional(ProtocolName),
    limit: limit(LIST_LIMITS.instructionTypes),
    range: blockTime,
  },
  'getInstructionTypes options (protocolName omitted: all protocols)',
);

const optionsOf = (fields: string) => `Options object: ${fields}`;
/** A call priced as the statistics of a range. */
const STATS = { requests: 1, question: 'stats' } as const;

export const protocolStats: Operation = declared({
  name: 'protocolStats',
  summary: 'Aggregates for one protocol: counts, success rate, fees, compute units, first and last seen',
  preset: 'protocolStats',
  cost: STATS,
  request: request(StatsRequest, 'one'),
  result: strict(ProtocolStats),
  doors: { rpc: 'getProtocolStats', rest: '/analytics/protocols', graphqlPeer: 'protocolStats' },
  rpcWords: optionsOf('protocolName (required), blockTime'),
  restWords: {
    summary: 'Aggregates for one protocol',
    description: 'Equals JSON-RPC getProtocolStats {protocolName, blockTime} over the day range. Unknown or inactive protocols: 400.',
    result: ProtocolStats,
    resultWords: 'Protocol statistics',
    meta: ['protocol', 'range'],
  },
  answer: (a, c) => a.protocolStats(c.protocol, c.range),
});

/** GraphQL's protocolStats: each asked protocol's statistics (every available one when none is asked), with distinct program ids. */
export const protocolStatsList: Operation = declared({
  name: 'protocolStatsList',
  summary: 'Statistics per protocol: each one asked, or every available protocol',
  cost: STATS,
  request: request(
    options(
      { protocols: Type.Optional(list(FILTER_LISTS.protocols.item, FILTER_LISTS.protocols.max, 'Protocol identifiers')), range: blockTime },
      'protocolStats (GraphQL) request',
    ),
    'list',
  ),
  result: Type.Array(Type.Object({ ...ProtocolStats.properties, uniquePrograms: Type.Integer({ minimum: 0, description: 'Distinct program ids' }) })),
  // The SDL's own field (its types are shared with other fields).
  doors: { graphqlPeer: 'protocolStats' },
  prepared: (a, c) => a.prepare('stats', c),
});

export const protocolComparison: Operation = declared({
  name: 'protocolComparison',
  summary: 'One comparison item per requested protocol',
  preset: 'protocolComparison',
  cost: STATS,
  request: request(ComparisonRequest, 'each'),
  result: Type.Array(strict(ProtocolComparisonItem)),
  doors: { rpc: 'getProtocolComparison' },
  rpcWords: optionsOf('protocols (required), blockTime'),
  answer: (a, c) => a.protocolComparison(c.protocols, c.range),
});

export const protocolPerformance: Operation = declared({
  name: 'protocolPerformance',
  summary: 'Performance of one protocol: success rate, compute-unit percentiles, fees, total volume',
  preset: 'protocolPerformance',
  cost: STATS,
  request: request(PerformanceRequest, 'one'),
  result: strict(ProtocolPerformance),
  doors: { rpc: 'getProtocolPerformance' },
  rpcWords: optionsOf('protocolName (required), blockTime'),
  answer: (a, c) => a.protocolPerformance(c.protocol, c.range),
});

// Declared by its request alone (declared.ts): the JSON-RPC method and its MCP tool are derived.
export const topProtocols: Operation = declared({
  name: 'topProtocols',
  summary: 'Protocols ranked by transactions, fees or success rate',
  preset: 'topProtocols',
  cost: STATS,
  request: request(TopRequest, 'narrow'),
  result: Type.Array(strict(TopProtocol)),
  doors: { rpc: 'getTopProtocols' },
  // The one check filled the defaults and ordered the range.
  answer: (a, c) => a.topProtocols(c.range, c.sortBy ?? 'transactions', c.limit ?? LIST_LIMITS.topProtocols.default),
});

export const protocolActivity: Operation = declared({
  name: 'protocolActivity',
  summary: 'Transactions over time in hourly, daily, weekly (from Monday, UTC) or monthly buckets, empty buckets included as zeros',
  preset: 'activity',
  cost: { requests: 1, question: 'series' },
  request: request(ActivityRequest, 'one', [bucketsAtMost('interval')]),
  result: Type.Array(strict(ActivityBucket)),
  doors: { rpc: 'getProtocolActivity', rest: '/analytics/time-series', graphqlPeer: 'timeSeries' },
  rpcWords: optionsOf('protocolName, blockTime (required, both bounds), interval'),
  restWords: {
    summary: 'Transactions over time',
    description:
      'Hourly, daily, weekly (ISO weeks, from Monday 00:00 UTC) or monthly buckets over the whole day range, empty buckets included as zeros ' +
      '(JSON-RPC getProtocolActivity; only hour buckets have an hour field; the first and last week or month may be partly outside the range, and count only the records inside it). ' +
      'Without protocol_name, all protocols together. ' +
      `At most ${MAX_ACTIVITY_BUCKETS} buckets.`,
    result: Type.Array(ActivityBucket),
    resultWords: 'Buckets in time order',
    fields: { interval: { name: 'granularity', schema: query.granularity } },
    meta: ['interval', 'protocol', 'range'],
  },
  // The one check ordered the range and counted its buckets.
  answer: (a, c) => a.activity(c.protocol, c.range as Required<TimeRange>, c.interval ?? 'hour'),
});

export const instructionTypes: Operation = declared({
  name: 'instructionTypes',
  summary: 'Statistics per instruction type, most frequent first',
  preset: 'instructionTypes',
  cost: STATS,
  request: request(InstructionTypeRequest, 'one'),
  result: Type.Array(strict(InstructionTypeStats)),
  doors: { rpc: 'getInstructionTypes' },
  answer: (a, c) => a.instructionTypes(c.protocol, c.range, c.limit ?? LIST_LIMITS.instructionTypes.default),
});

export const protocols: Operation = declared({
  name: 'protocols',
  summary: 'The active protocol identifiers',
  preset: 'protocols',
  request: request(options({}, 'getProtocols: no params'), 'narrow'),
  result: Type.Array(Type.String()),
  doors: { rpc: 'getProtocols', graphqlPeer: 'protocols' },
  answer: (a) => a.protocols(),
});

export const feeStats: Operation = declared({
  name: 'feeStats',
  summary: 'Fee statistics for one protocol or all together, and per protocol',
  preset: 'feeStats',
  cost: STATS,
  request: request(options({ protocol: Type.Optional(ProtocolName), range: blockTime }, 'Fee statistics request (protocol omitted: all protocols)'), 'one'),
  result: FeeAnswer,
  // SPEC "Versioning": /analytics/fees becomes transactions with fee metrics.
  doors: { rest: '/analytics/fees', graphqlPeer: 'transactions' },
  restWords: {
    summary: 'Fee statistics',
    description:
      'Total, average, minimum, maximum and p50/p95/p99 of fees in lamports, for one protocol or all ' +
      'protocols together, plus the same per protocol. Percentiles come from mergeable t-digest sketches (approximate).',
    resultWords: 'Fee statistics',
    meta: ['protocol', 'range'],
  },
  answer: async (a, c) => {
    const { overall, protocols: per } = await a.feeStats(c.protocol, c.range);
    return { ...overall, protocols: per };
  },
});

export const globalStats: Operation = declared({
  name: 'globalStats',
  summary: 'Global database statistics',
  request: request(options({}, 'Global statistics: no parameters'), 'narrow'),
  result: GlobalStats,
  // SPEC "Versioning": /stats becomes protocolStats.
  doors: { rest: '/stats', graphqlPeer: 'protocolStats' },
  restWords: {
    summary: 'Global statistics',
    description:
      'Totals, success and failure, per-protocol counts, first and last block time, latest slot over the ' +
      'active protocols (from the hourly view), and storage size per table (system.parts). Never scans the base table.',
    resultWords: 'Global statistics',
  },
  preset: 'globalStats',
  answer: (a) => a.globalStats(),
});

export const queryComplexity: Operation = {
  ...operation('cost', 'fixed', 'What a question would cost, and what would lower it, before it runs', { name: 'queryComplexity', graphql: 'queryComplexity' }),
};
