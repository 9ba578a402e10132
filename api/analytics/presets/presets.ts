// The facade's answers as named presets over the question model: each says which measures,
// grouped by which dimensions, it asks for (protocols arrive resolved by the facade), and
// how its rows become the answer's shape. No SQL here: compile.ts writes it.
import type { ActivityBucket, InstructionTypeStats, ProtocolStats, TopProtocol } from '../../../core/vocabulary/answers.ts';
import { num, type AnswerRow, type Question, type QuestionFilters } from '../question/compile.ts';
import { bucketStarts, type ActivityGranularity, type Granularity } from '../question/granularity.ts';
import type { MeasureName } from '../question/model.ts';
import type { TimeRange } from '../types.ts';

export type TopSortBy = 'transactions' | 'fees' | 'successRate';
type Preset = Question<MeasureName>;

const STATS: MeasureName[] = [
  'count',
  'successCount',
  'failedCount',
  'successRate',
  'sumFee',
  'avgFee',
  'sumComputeUnits',
  'avgComputeUnits',
  'avgAccounts',
  'instructionTypes',
  'firstSeen',
  'lastSeen',
];
const FEES: MeasureName[] = ['count', 'sumFee', 'avgFee', 'minFee', 'maxFee', 'feeQuantiles'];

const perProtocol = (measures: MeasureName[], filters: QuestionFilters): Preset => ({ measures, dimensions: ['protocol'], filters });

export const PRESETS = {
  /** getProtocolStats, and GraphQL protocolStats with the count of distinct program ids. */
  stats: (f: QuestionFilters, programs = false): Preset => perProtocol(programs ? [...STATS, 'programs'] : STATS, f),
  comparison: (f: QuestionFilters): Preset => perProtocol(['count', 'successRate', 'avgFee', 'avgComputeUnits', 'instructionTypes'], f),
  performance: (f: QuestionFilters): Preset => perProtocol(['count', 'successRate', 'avgComputeUnits', 'avgFee', 'cuQuantiles', 'avgAccounts', 'sumFee'], f),
  top: (f: QuestionFilters): Preset => perProtocol(['count', 'successRate', 'sumFee'], f),
  activity: (f: QuestionFilters, granularity: Granularity): Preset => ({
    measures: ['count', 'successCount', 'failedCount', 'sumFee', 'sumComputeUnits'],
    dimensions: ['time'],
    granularity,
    filters: f,
  }),
  /** Figures of named (protocol, bucket) cells, for live subscriptions. */
  cells: (f: QuestionFilters, granularity: ActivityGranularity): Preset => ({
    measures: ['count', 'successCount', 'failedCount', 'sumFee', 'sumComputeUnits', 'maxSlot'],
    dimensions: ['protocol', 'time'],
    granularity,
    filters: f,
  }),
  instructionTypes: (f: QuestionFilters, limit: number): Preset => ({
    measures: ['count', 'successRate', 'avgComputeUnits', 'avgFee'],
    dimensions: ['protocol', 'instructionType'],
    filters: f,
    order: { measure: 'count', direction: 'desc', dimensions: 'asc' },
    page: { limit },
  }),
  count: (f: QuestionFilters): Preset => ({ measures: ['count'], filters: f }),
  fees: (f: QuestionFilters): Preset => ({ measures: FEES, filters: f }),
  feesPerProtocol: (f: QuestionFilters): Preset => perProtocol(FEES, f),
  global: (f: QuestionFilters): Preset => perProtocol(['count', 'successCount', 'sumFee', 'sumComputeUnits', 'firstSeen', 'lastSeen', 'maxSlot'], f),
};

export function toStats(protocolName: string, r: AnswerRow | undefined): ProtocolStats {
  const n = num(r, 'count');
  return {
    protocolName,
    totalTransactions: n,
    successfulTransactions: num(r, 'successCount'),
    failedTransactions: num(r, 'failedCount'),
    successRate: num(r, 'successRate'),
    totalFees: num(r, 'sumFee'),
    averageFee: num(r, 'avgFee'),
    totalComputeUnits: num(r, 'sumComputeUnits'),
    averageComputeUnits: num(r, 'avgComputeUnits'),
    averageAccountsCount: num(r, 'avgAccounts'),
    uniqueInstructionTypes: num(r, 'instructionTypes'),
    firstSeen: num(r, 'firstSeen'),
    lastSeen: num(r, 'lastSeen'),
  };
}

const SORT_KEY: Record<TopSortBy, (t: TopProtocol) => number> = {
  transactions: (t) => t.transactionCount,
  fees: (t) => t.totalFees,
  successRate: (t) => t.successRate,
};

export function toTop(rows: readonly AnswerRow[], sortBy: TopSortBy, limit: number): TopProtocol[] {
  return rows
    .map((r) => ({ protocolName: r.protocol ?? '', transactionCount: num(r, 'count'), successRate: num(r, 'successRate'), totalFees: num(r, 'sumFee') }))
    .sort((x, y) => SORT_KEY[sortBy](y) - SORT_KEY[sortBy](x) || x.protocolName.localeCompare(y.protocolName))
    .slice(0, limit);
}

/** Every bucket of a closed range, those without records as zeros. */
export function toActivity(rows: readonly AnswerRow[], range: Required<TimeRange>, granularity: Granularity): ActivityBucket[] {
  const byBucket = new Map(rows.map((r) => [r.time, r]));
  return bucketStarts(range, granularity).map((ts) => {
    const r = byBucket.get(ts);
    const d = new Date(ts * 1000);
    return {
      timestamp: ts,
      date: d.toISOString().slice(0, 10),
      ...(granularity === 'hour' ? { hour: d.getUTCHours() } : {}),
      count: num(r, 'count'),
      successCount: num(r, 'successCount'),
      failedCount: num(r, 'failedCount'),
      totalFees: num(r, 'sumFee'),
      totalComputeUnits: num(r, 'sumComputeUnits'),
    };
  });
}

export const toInstructionTypes = (rows: readonly AnswerRow[]): InstructionTypeStats[] =>
  rows.map((r) => ({
    instructionType: r.instructionType ?? '',
    protocolName: r.protocol ?? '',
    count: num(r, 'count'),
    successRate: num(r, 'successRate'),
    averageComputeUnits: num(r, 'avgComputeUnits'),
    averageFee: num(r, 'avgFee'),
  }));
