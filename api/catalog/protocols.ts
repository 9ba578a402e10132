// The catalog's per-protocol aggregates: statistics, comparison, performance, rankings,
// activity over time, instruction types, fees, the protocol list and whole-store figures.
// Each is declared once; its doors are derived (api/catalog/catalog.ts).
import { Type } from '@sinclair/typebox';
import { HOURS_PER_DAY, LIST_LIMITS, MAX_ACTIVITY_BUCKETS } from '../../core/limits.ts';
import { FILTER_LISTS } from '../../core/vocabulary/primitives.ts';
import {
  ActivityBucket,
  InstructionTypeStats,
  ProtocolComparisonItem,
  ProtocolPerformance,
  ProtocolStats,
  TopProtocol,
} from '../../core/vocabulary/answers.ts';
import { checkBuckets, GRANULARITIES, type Granularity } from '../analytics/question/granularity.ts';
import { request, spanAtMost } from '../../core/request-check.ts';
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
  request: request(ActivityRequest, 'one', [
    // Hourly buckets: 24 a day; daily: 1 (the last storable day has fewer hours, never more);
    // weeks and months: 0, as the storable range never holds more of them than the maximum.
    spanAtMost('range.gte', 'range.lte', { param: 'interval', hour: HOURS_PER_DAY, day: 1, week: 0, month: 0 }, MAX_ACTIVITY_BUCKETS, (v) =>
      checkBuckets(v.range as Required<TimeRange>, (v.interval as Granularity | undefined) ?? 'hour'),
    ),
  ]),
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

export const feeStats: Operation = {
  // SPEC "Versioning": /analytics/fees becomes transactions with fee metrics.
  ...operation('feeStats', 'stats', 'Fee statistics for one protocol or all together, and per protocol', { graphql: 'transactions' }),
  // The route and its handler: api/rest/hand-routes.ts.
  rest: { url: '/analytics/fees' },
};

export const globalStats: Operation = {
  // SPEC "Versioning": /stats becomes protocolStats.
  ...operation('globalStats', 'fixed', 'Global database statistics', { graphql: 'protocolStats' }),
  rest: { url: '/stats' },
};

export const queryComplexity: Operation = {
  ...operation('cost', 'fixed', 'What a question would cost, and what would lower it, before it runs', { name: 'queryComplexity', graphql: 'queryComplexity' }),
};
