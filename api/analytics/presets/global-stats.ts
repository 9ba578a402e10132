// Global statistics (REST /stats): totals over every visible protocol from the hourly view
// (the global preset, with no range, so no base-table edge is read), plus storage figures from system.parts, which
// the engine keeps per data part: neither needs a scan of the base table.
import type { TableStorage, GlobalStats } from '../../../core/vocabulary/answers.ts';
import { PUBLISHED_TABLES } from '../../../warehouse/tables.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { num, type AnswerRow } from '../question/compile.ts';
export type { TableStorage, GlobalStats };

/**
 * Storage of the published tables only, without row counts: a client is not told how many
 * keys or dead letters exist, nor (by a row count beside the visible total) how many
 * records of hidden protocols are stored.
 */
export async function tableStorage(wh: Warehouse): Promise<TableStorage[]> {
  const rows = await wh.query<{ table: string; parts: string; bytes: string; raw: string }>(
    `SELECT table, count() AS parts, sum(bytes_on_disk) AS bytes, sum(data_uncompressed_bytes) AS raw
     FROM system.parts WHERE active AND database = currentDatabase() AND table IN {tables:Array(String)}
     GROUP BY table ORDER BY table`,
    { params: { tables: PUBLISHED_TABLES } },
  );
  return rows.map((r) => ({
    table: r.table,
    parts: Number(r.parts),
    bytesOnDisk: Number(r.bytes),
    uncompressedBytes: Number(r.raw),
  }));
}

export function toGlobalStats(active: readonly string[], perProtocol: readonly AnswerRow[], storage: TableStorage[]): GlobalStats {
  let n = 0;
  let ok = 0;
  let fees = 0;
  let cu = 0;
  let first = Infinity;
  let last = 0;
  let slot = 0n;
  for (const r of perProtocol) {
    n += num(r, 'count');
    ok += num(r, 'successCount');
    fees += num(r, 'sumFee');
    cu += num(r, 'sumComputeUnits');
    first = Math.min(first, num(r, 'firstSeen'));
    last = Math.max(last, num(r, 'lastSeen'));
    const s = BigInt(String(r.values.maxSlot ?? '0'));
    if (s > slot) slot = s;
  }
  const counts = new Map(perProtocol.map((r) => [r.protocol ?? '', num(r, 'count')]));
  return {
    totalTransactions: n,
    successfulTransactions: ok,
    failedTransactions: n - ok,
    successRate: n === 0 ? 0 : (ok / n) * 100,
    totalFees: fees,
    totalComputeUnits: cu,
    averageFee: n === 0 ? 0 : fees / n,
    averageComputeUnits: n === 0 ? 0 : cu / n,
    protocolCount: active.length,
    protocols: active.map((p) => ({ protocolName: p, totalTransactions: counts.get(p) ?? 0 })),
    firstSeen: n === 0 ? 0 : first,
    lastSeen: n === 0 ? 0 : last,
    latestSlot: slot.toString(),
    storage: {
      bytesOnDisk: storage.reduce((s, t) => s + t.bytesOnDisk, 0),
      uncompressedBytes: storage.reduce((s, t) => s + t.uncompressedBytes, 0),
      tables: storage,
    },
  };
}
