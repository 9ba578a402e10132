// Protocol comparison and performance answers, shaped from the rows of their presets
// (presets.ts): the facade (analytics.ts) asks, these shape.
import type { ProtocolComparisonItem, ProtocolPerformance } from '../../../core/vocabulary/answers.ts';
import { num, quantiles, type AnswerRow } from '../question/compile.ts';
export type { ProtocolComparisonItem, ProtocolPerformance };

/** One item per requested protocol, in the order asked. */
export function toComparison(protocols: readonly string[], rows: readonly AnswerRow[]): ProtocolComparisonItem[] {
  const byName = new Map(rows.map((r) => [r.protocol, r]));
  return protocols.map((name) => {
    const r = byName.get(name);
    return {
      protocolName: name,
      totalTransactions: num(r, 'count'),
      successRate: num(r, 'successRate'),
      averageFee: num(r, 'avgFee'),
      averageComputeUnits: num(r, 'avgComputeUnits'),
      uniqueInstructionTypes: num(r, 'instructionTypes'),
    };
  });
}

/**
 * Performance of one protocol. Percentiles come from merged t-digest states, so they are
 * approximate (close to exact for the sizes here); compute units are whole numbers, so
 * they are rounded to integers.
 */
export function toPerformance(protocolName: string, r: AnswerRow | undefined): ProtocolPerformance {
  const [p50, p95, p99] = quantiles(r, 'cuQuantiles');
  return {
    protocolName,
    successRate: num(r, 'successRate'),
    averageComputeUnits: num(r, 'avgComputeUnits'),
    averageFee: num(r, 'avgFee'),
    p50ComputeUnits: r === undefined ? 0 : Math.round(p50),
    p95ComputeUnits: r === undefined ? 0 : Math.round(p95),
    p99ComputeUnits: r === undefined ? 0 : Math.round(p99),
    averageAccountsCount: num(r, 'avgAccounts'),
    totalVolume: num(r, 'sumFee'),
  };
}
