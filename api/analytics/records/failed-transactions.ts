// Failed-transaction records (with error message, logs and raw data, which only the base
// table keeps), newest first.
import type { FailedTransaction } from '../../../core/vocabulary/answers.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { commonConditions } from '../question/model.ts';
import type { TimeRange } from '../types.ts';
import { TABLES } from '../../../warehouse/tables.ts';
export type { FailedTransaction };

export interface FailedRequest {
  /** Protocols to search (already narrowed to visible ones by the caller). */
  protocols: readonly string[];
  programId?: string;
  range: TimeRange;
  limit: number;
}

interface Row {
  signature: string;
  slot: string;
  block_time: number;
  program_id: string;
  protocol_name: string;
  error_message: string;
  log_messages: string;
  raw_data: string;
}

/** The newest `limit` failed records, ordered by (block_time, signature, instruction_index) descending. */
export async function listFailedTransactions(wh: Warehouse, req: FailedRequest): Promise<FailedTransaction[]> {
  if (req.protocols.length === 0) return [];
  const { where, params } = commonConditions(
    { range: req.range, status: 'failed', programIds: req.programId === undefined ? undefined : [req.programId] },
    req.protocols,
  );
  params.lim = req.limit;
  const select = (extra: string[], extraParams: Record<string, unknown>): Promise<Row[]> =>
    wh.query<Row>(
      `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS block_time, program_id, protocol_name,
              error_message, log_messages, raw_data
       FROM ${TABLES.transactions} WHERE ${[...where, ...extra].join(' AND ')}
       ORDER BY block_time DESC, signature DESC, instruction_index DESC LIMIT {lim:UInt32}`,
      { params: { ...params, ...extraParams } },
    );
  // The hourly view knows how many records failed in each hour: start from the latest hour
  // that still leaves `limit` failures ahead of it, so a short answer does not read the
  // whole history. The view cannot see the programId filter, so a short page falls back
  // to the full range, which keeps the answer exact.
  const window = await failedWindow(wh, req);
  let rows: Row[] | undefined;
  if (window !== undefined) {
    rows = await select(["block_time >= toDateTime({win:UInt32}, 'UTC')"], { win: window });
    if (rows.length < req.limit) rows = undefined;
  }
  rows ??= await select([], {});
  return rows.map((r) => ({
    signature: r.signature,
    slot: String(r.slot),
    blockTime: Number(r.block_time),
    programId: r.program_id,
    protocolName: r.protocol_name,
    errorMessage: r.error_message,
    logMessages: r.log_messages,
    rawData: r.raw_data,
  }));
}

async function failedWindow(wh: Warehouse, req: FailedRequest): Promise<number | undefined> {
  const where = ['protocol_name IN {protocols:Array(String)}'];
  const params: Record<string, unknown> = { protocols: req.protocols, need: req.limit };
  if (req.range.gte !== undefined) {
    where.push("hour_start >= toStartOfHour(toDateTime({lo:UInt32}, 'UTC'))");
    params.lo = req.range.gte;
  }
  if (req.range.lte !== undefined) {
    where.push("hour_start <= toDateTime({hi:UInt32}, 'UTC')");
    params.hi = req.range.lte;
  }
  const rows = await wh.query<{ edge: number }>(
    `SELECT toUInt32(hour_start) AS edge FROM (
       SELECT hour_start, sum(sum(tx_count) - sum(success_count)) OVER (ORDER BY hour_start DESC) AS cum
       FROM ${TABLES.protocolHourly} WHERE ${where.join(' AND ')} GROUP BY hour_start)
     WHERE cum >= {need:UInt64} ORDER BY hour_start DESC LIMIT 1`,
    { params },
  );
  return rows[0] ? Number(rows[0].edge) : undefined;
}
