// The record id (issue 37, migration 110): rid = slot << 30 | position << 13 | instruction_index,
// Solana's own position of a record, so ids sort in ledger order and a replayed record has
// the id it had. `position` is the record's transaction_index in its block when the producer
// sends it; otherwise this writer's per-slot counter assigns one, once, here.
//
// The counter is derived from stored state, never kept in memory between batches: a
// transaction's position is read back from the records already stored in its slot (the
// other instructions of a transaction get the position its first one got), and a new one is
// the slot's largest stored counted position plus one. So a restart continues where the
// store is, a record stored once keeps its id (de-duplication drops its replays before this
// step), and a batch that failed before its insert assigned nothing that lasts. Limits
// (docs/ingest-record-id.md): 65,536 counted transactions a slot, and one writer at a time
// for the records of a slot sent without transaction_index (two writers reading the same
// stored maximum would hand out the same position).
import { COUNTED_POSITIONS_PER_SLOT, FIRST_COUNTED_POSITION, RID_INSTRUCTION_BITS, RID_POSITION_BITS } from '../core/limits/record-id.ts';
import { TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import type { Accepted } from './steps/records.ts';
import { drop, ok, type BatchStep } from './steps/step.ts';

const LOW_BITS = BigInt(RID_POSITION_BITS + RID_INSTRUCTION_BITS);

/** The id of the record at (slot, position, instruction index). */
export function packRid(slot: bigint, position: number, instructionIndex: number): bigint {
  return (slot << LOW_BITS) | (BigInt(position) << BigInt(RID_INSTRUCTION_BITS)) | BigInt(instructionIndex);
}

/** The slot, position and instruction index an id packs. */
export function unpackRid(rid: bigint): { slot: bigint; position: number; instructionIndex: number } {
  return {
    slot: rid >> LOW_BITS,
    position: Number((rid >> BigInt(RID_INSTRUCTION_BITS)) & ((1n << BigInt(RID_POSITION_BITS)) - 1n)),
    instructionIndex: Number(rid & ((1n << BigInt(RID_INSTRUCTION_BITS)) - 1n)),
  };
}

/** The writer step that gives records sent without transaction_index their counted position. */
export function countedPositions(wh: Warehouse): BatchStep<Accepted> {
  return async (batch) => {
    // Records kept as received always carry transaction_index (storesAsReceived); only
    // normalised rows can lack it.
    const pending = batch.filter((a) => a.row !== undefined && a.row.transaction_index === undefined);
    if (pending.length === 0) return batch.map(ok);
    const slots = [...new Set(pending.map((a) => a.row!.slot))];
    const big = slots.map(BigInt).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const lo = big[0]!;
    const hi = big.at(-1)!;
    // The counted records already stored in these slots (a range of tx_by_rid, in id order).
    const stored = await wh.query<{ slot: string; position: number; signature: string }>(
      `SELECT toString(bitShiftRight(rid, {low:UInt8})) AS slot, toUInt32(bitAnd(bitShiftRight(rid, {ib:UInt8}), {pm:UInt32})) AS position,
              JSONExtractString(toValidUTF8(record), 1) AS signature
       FROM ${TABLES.txByRid}
       WHERE rid >= {lo:UInt64} AND rid <= {hi:UInt64} AND toString(bitShiftRight(rid, {low:UInt8})) IN {slots:Array(String)}
         AND bitAnd(bitShiftRight(rid, {ib:UInt8}), {pm:UInt32}) >= {first:UInt32}`,
      {
        params: {
          low: Number(LOW_BITS),
          ib: RID_INSTRUCTION_BITS,
          pm: 2 ** RID_POSITION_BITS - 1,
          first: FIRST_COUNTED_POSITION,
          lo: packRid(lo, FIRST_COUNTED_POSITION, 0).toString(),
          hi: ((hi + 1n) << LOW_BITS) - 1n,
          slots,
        },
      },
    );
    const next = new Map<string, number>();
    const known = new Map<string, number>();
    for (const r of stored) {
      const p = Number(r.position);
      if (p + 1 > (next.get(r.slot) ?? FIRST_COUNTED_POSITION)) next.set(r.slot, p + 1);
      known.set(`${r.slot}#${r.signature}`, p);
    }
    const last = FIRST_COUNTED_POSITION + COUNTED_POSITIONS_PER_SLOT - 1;
    const out = new Map<Accepted, boolean>();
    for (const a of pending) {
      const row = a.row!;
      const key = `${row.slot}#${row.signature}`;
      let p = known.get(key);
      if (p === undefined) {
        p = next.get(row.slot) ?? FIRST_COUNTED_POSITION;
        if (p > last) {
          out.set(a, false);
          continue;
        }
        next.set(row.slot, p + 1);
        known.set(key, p);
      }
      row.transaction_index = p;
      out.set(a, true);
    }
    return batch.map((a) => (out.get(a) === false ? drop('no_position') : ok(a)));
  };
}
