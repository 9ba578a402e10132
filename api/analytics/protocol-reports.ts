// Protocol comparison and performance answers, shaped from the same per-protocol aggregates
// as protocol statistics (protocol_hourly for whole hours, base table for ragged edges);
// the facade (analytics.ts) reads the aggregates and these shape them.
import type { ProtocolComparisonItem, ProtocolPerformance } from '../../core/vocabulary/answers.ts';
import type { ProtocolAggregate } from './protocol-aggregates.ts';
export type { ProtocolComparisonItem, ProtocolPerformance };

const rate = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);
const avg = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

/** One item per requested protocol, in the order asked. */
export function toComparison(protocols: readonly string[], rows: readonly ProtocolAggregate[]): ProtocolComparisonItem[] {
  const byName = new Map<string | undefined, ProtocolAggregate>(rows.map((r) => [r.protocolName, r]));
  return protocols.map((name) => {
    const r = byName.get(name);
    const n = r?.txCount ?? 0;
    return {
      protocolName: name,
      totalTransactions: n,
      successRate: rate(r?.successCount ?? 0, n),
      averageFee: avg(r?.feeSum ?? 0, n),
      averageComputeUnits: avg(r?.cuSum ?? 0, n),
      uniqueInstructionTypes: r?.instructionTypes ?? 0,
    };
  });
}

/**
 * Performance of one protocol. Percentiles come from merged t-digest states, so they are
 * approximate (close to exact for the sizes here); compute units are whole numbers, so
 * they are rounded to integers.
 */
export function toPerformance(protocolName: string, r: ProtocolAggregate | undefined): ProtocolPerformance {
  const n = r?.txCount ?? 0;
  const [p50, p95, p99] = r?.cuQuantiles ?? [0, 0, 0];
  return {
    protocolName,
    successRate: rate(r?.successCount ?? 0, n),
    averageComputeUnits: avg(r?.cuSum ?? 0, n),
    averageFee: avg(r?.feeSum ?? 0, n),
    p50ComputeUnits: n === 0 ? 0 : Math.round(p50),
    p95ComputeUnits: n === 0 ? 0 : Math.round(p95),
    p99ComputeUnits: n === 0 ? 0 : Math.round(p99),
    averageAccountsCount: avg(r?.accountsSum ?? 0, n),
    totalVolume: r?.feeSum ?? 0,
  };
}
