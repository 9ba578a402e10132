// Fee statistics (REST /analytics/fees; GraphQL fee metrics): totals, average, extremes and
// t-digest percentiles, from the same merged view + ragged-edge aggregate as every other
// protocol-level answer. Percentiles are approximate by design (mergeable sketches).
import type { FeeStats } from '../../core/vocabulary/answers.ts';
import type { ProtocolAggregate } from './protocol-aggregates.ts';
export type { FeeStats };

export function toFeeStats(protocolName: string | null, a: ProtocolAggregate | undefined): FeeStats {
  const n = a?.txCount ?? 0;
  return {
    protocolName,
    totalTransactions: n,
    totalFees: a?.feeSum ?? 0,
    averageFee: n === 0 ? 0 : (a?.feeSum ?? 0) / n,
    minFee: n === 0 ? 0 : (a?.feeMin ?? 0),
    maxFee: n === 0 ? 0 : (a?.feeMax ?? 0),
    p50Fee: n === 0 ? 0 : (a?.feeQuantiles[0] ?? 0),
    p95Fee: n === 0 ? 0 : (a?.feeQuantiles[1] ?? 0),
    p99Fee: n === 0 ? 0 : (a?.feeQuantiles[2] ?? 0),
  };
}
