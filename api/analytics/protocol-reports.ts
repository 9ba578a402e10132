// Protocol comparison and performance answers, built on the same per-protocol aggregates
// as protocol statistics (protocol_hourly for whole hours, base table for ragged edges).
// Kept beside analytics.ts as functions of an Analytics instance so that the interfaces
// share one implementation.
import type { Analytics } from './analytics.ts';
import { aggregateProtocols, type ProtocolAggregate } from './protocol-aggregates.ts';
import type { TimeRange } from './types.ts';

export interface ProtocolComparisonItem {
  protocolName: string;
  totalTransactions: number;
  successRate: number;
  averageFee: number;
  averageComputeUnits: number;
  uniqueInstructionTypes: number;
}

export interface ProtocolPerformance {
  protocolName: string;
  successRate: number;
  averageComputeUnits: number;
  averageFee: number;
  p50ComputeUnits: number;
  p95ComputeUnits: number;
  p99ComputeUnits: number;
  averageAccountsCount: number;
  /** Total fees in lamports over the range (DESIGN section 4). */
  totalVolume: number;
}

const rate = (part: number, whole: number): number => (whole === 0 ? 0 : (part / whole) * 100);
const avg = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

/**
 * One item per requested protocol, in the order asked. Each name must be an active
 * protocol; `field` names the list in the error (e.g. "options.protocols").
 */
export async function protocolComparison(a: Analytics, protocols: readonly string[], range: TimeRange, field = 'protocols'): Promise<ProtocolComparisonItem[]> {
  for (const [i, name] of protocols.entries()) await a.requireProtocol(name, `${field}[${i}]`);
  const rows = await a.cache.get(`cmp:${JSON.stringify([protocols, range])}`,
    () => aggregateProtocols(a.wh, { protocols, range, distinct: true }));
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
export async function protocolPerformance(a: Analytics, protocolName: string, range: TimeRange): Promise<ProtocolPerformance> {
  const r = await a.protocolAggregate(protocolName, range);
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
