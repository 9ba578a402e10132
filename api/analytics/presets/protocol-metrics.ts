// The figures of GET /v1/metrics (users' own Prometheus) as questions over the model: all-time
// totals per protocol (and instruction type, when asked) read from the hourly views, and the
// same measures over the last minutes or hour (whole hours from the views, the ragged edges
// from the base table, as every question reads them). Never a scan of the base table beyond
// those edges: the compiler refuses a question no view answers.
import { num, quantiles, type AnswerRow, type Question, type QuestionFilters } from '../question/compile.ts';
import type { Dimension, MeasureName } from '../question/model.ts';

export interface MetricsAsk {
  /** The protocols to report, already resolved to visible ones. */
  protocols: readonly string[];
  /** Report per (protocol, instruction type) for these types only. */
  instructionTypes?: readonly string[];
  /** Windows of the gauges: label -> seconds, each ending at `now`. */
  windows: Readonly<Record<string, number>>;
  /** Unix seconds. */
  now: number;
}

export interface WindowFigures {
  count: number;
  failed: number;
  /** Successful records over all records, 0-1; null over no records. */
  successRatio: number | null;
  /** Fee and compute-unit quantiles 0.5, 0.95, 0.99 (t-digest); null over no records. */
  fee: [number, number, number] | null;
  computeUnits: [number, number, number] | null;
}

export interface MetricsSeries {
  protocol: string;
  instructionType?: string;
  total: { count: number; failed: number; fees: number; computeUnits: number };
  windows: Record<string, WindowFigures>;
}

const TOTALS: MeasureName[] = ['count', 'failedCount', 'sumFee', 'sumComputeUnits'];
const WINDOW: MeasureName[] = ['count', 'successCount', 'failedCount', 'feeQuantiles', 'cuQuantiles'];

const dimensionsOf = (ask: MetricsAsk): Dimension[] => (ask.instructionTypes === undefined ? ['protocol'] : ['protocol', 'instructionType']);

function filtersOf(ask: MetricsAsk, range: QuestionFilters['range']): QuestionFilters {
  return { protocols: ask.protocols, range, protocolsNamed: true, ...(ask.instructionTypes === undefined ? {} : { instructionTypes: ask.instructionTypes }) };
}

/** The questions: totals over all time, then one per window. */
export function metricsQuestions(ask: MetricsAsk): { totals: Question; windows: [string, Question][] } {
  const dimensions = dimensionsOf(ask);
  return {
    totals: { measures: TOTALS, dimensions, filters: filtersOf(ask, {}) },
    windows: Object.entries(ask.windows).map(([label, seconds]) => [
      label,
      {
        measures: WINDOW,
        dimensions,
        filters: filtersOf(ask, { gte: ask.now - seconds + 1, lte: ask.now }),
      },
    ]),
  };
}

const keyOf = (r: { protocol?: string; instructionType?: string }): string => `${r.protocol ?? ''}\n${r.instructionType ?? ''}`;

function windowFigures(r: AnswerRow | undefined): WindowFigures {
  const count = num(r, 'count');
  return {
    count,
    failed: num(r, 'failedCount'),
    successRatio: count === 0 ? null : num(r, 'successCount') / count,
    fee: count === 0 ? null : quantiles(r, 'feeQuantiles'),
    computeUnits: count === 0 ? null : quantiles(r, 'cuQuantiles'),
  };
}

/**
 * One series per visible protocol (zeros without records), or per (protocol, instruction
 * type) that has records when types are asked; in protocol, then type order.
 */
export function toMetricsSeries(ask: MetricsAsk, totals: readonly AnswerRow[], windows: readonly [string, readonly AnswerRow[]][]): MetricsSeries[] {
  const byWindow = windows.map(([label, rows]) => [label, new Map(rows.map((r) => [keyOf(r), r]))] as const);
  const byKey = new Map(totals.map((r) => [keyOf(r), r]));
  const keys =
    ask.instructionTypes === undefined
      ? ask.protocols.map((protocol) => ({ protocol }))
      : totals
          .map((r) => ({ protocol: r.protocol ?? '', instructionType: r.instructionType ?? '' }))
          .sort((a, b) => a.protocol.localeCompare(b.protocol) || a.instructionType.localeCompare(b.instructionType));
  return keys.map((k) => {
    const t = byKey.get(keyOf(k));
    return {
      ...k,
      total: { count: num(t, 'count'), failed: num(t, 'failedCount'), fees: num(t, 'sumFee'), computeUnits: num(t, 'sumComputeUnits') },
      windows: Object.fromEntries(byWindow.map(([label, rows]) => [label, windowFigures(rows.get(keyOf(k)))])),
    };
  });
}
