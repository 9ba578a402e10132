// Step 4, normalise: a valid record of a known protocol to its base-table row. Refuses
// `accounts_count_missing` and `slot_out_of_range` (what the row cannot be built without).
import { MAX_RID_SLOT } from '../../core/limits/record-id.ts';
import type { BaseRow } from '../../warehouse/tables.ts';
import { deadLetter, ok, type RecordResult } from './step.ts';
import type { IngestRecord } from './validate.ts';

export function normalise(r: IngestRecord): RecordResult<BaseRow> {
  if (r.accounts === undefined && r.accounts_count === undefined)
    return deadLetter('accounts_count_missing', 'accounts_count is required when accounts is absent');
  const slot = String(r.slot);
  // The slot is the record id's high part (migration 110): 34 bits, the last value reserved.
  if (!/^\d{1,20}$/.test(slot) || BigInt(slot) > MAX_RID_SLOT)
    return deadLetter('slot_out_of_range', `slot is out of range (at most ${MAX_RID_SLOT}: the record id's limit)`);
  return ok(normaliseRecord(r));
}

/** The base row of a record that passed the checks: defaults filled, slot as text, log
 *  lines joined. Pure: the same record always gives the same row (ingest/parse-pool.ts
 *  relies on it to rebuild a row on the main thread from the record's text). */
export function normaliseRecord(r: IngestRecord): BaseRow {
  const slot = String(r.slot);
  const accounts = r.accounts ?? [];
  return {
    signature: r.signature,
    instruction_index: r.instruction_index ?? 0,
    ...(r.transaction_index === undefined ? {} : { transaction_index: r.transaction_index }),
    slot,
    block_time: r.block_time,
    program_id: r.program_id,
    protocol_name: r.protocol_name,
    instruction_type: r.instruction_type,
    fee: r.fee,
    compute_units: r.compute_units,
    accounts,
    accounts_count: r.accounts_count ?? accounts.length,
    success: r.success,
    error_message: r.error_message ?? '',
    log_messages: Array.isArray(r.log_messages) ? r.log_messages.join('\n') : (r.log_messages ?? ''),
    raw_data: r.raw_data ?? '',
  };
}

/**
 * Whether the engine, reading the record's own JSON into the base table's columns, stores
 * what the normalised row holds. What the engine cannot do by itself: join a log_messages
 * array, count accounts for a missing accounts_count, and keep a slot number past 2^53 as
 * JSON.parse rounded it (the row path stores that rounded value; a decimal-string slot it
 * reads exactly as the row path does). Absent optional fields take the columns' defaults
 * (0, '', []), which are the row's. A record spread over several lines is re-serialised,
 * since each record must be one line of the buffer.
 */
export function storesAsReceived(r: IngestRecord, json: string): boolean {
  // Without transaction_index the writer adds its counter's position to the row it sends.
  return (
    r.accounts_count !== undefined &&
    r.transaction_index !== undefined &&
    !Array.isArray(r.log_messages) &&
    (typeof r.slot !== 'number' || r.slot <= Number.MAX_SAFE_INTEGER) &&
    json.indexOf('\n') < 0
  );
}
