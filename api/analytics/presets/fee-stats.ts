// Fee statistics (REST /analytics/fees): totals, average, extremes and t-digest
// percentiles, from the fee presets (presets.ts). Percentiles are approximate by design
// (mergeable sketches).
import type { FeeStats } from '../../../core/vocabulary/answers.ts';
import { num, quantiles, type AnswerRow } from '../question/compile.ts';
export type { FeeStats };

export function toFeeStats(protocolName: string | null, r: AnswerRow | undefined): FeeStats {
  const [p50, p95, p99] = quantiles(r, 'feeQuantiles');
  return {
    protocolName,
    totalTransactions: num(r, 'count'),
    totalFees: num(r, 'sumFee'),
    averageFee: num(r, 'avgFee'),
    minFee: num(r, 'minFee'),
    maxFee: num(r, 'maxFee'),
    p50Fee: p50,
    p95Fee: p95,
    p99Fee: p99,
  };
}
