// The record id (issue 37): Solana's own position of a record, packed into one UInt64 as
// slot (34 bits) | position of the transaction in the block (17 bits) | instruction index
// (13 bits). Migration 110 writes the same packing in SQL; docs/ingest-record-id.md says why
// these widths and what they refuse.

/** Bits of the instruction index (lowest). 8,191 is far above any transaction's instructions (a transaction is at most 1,232 bytes). */
export const RID_INSTRUCTION_BITS = 13;
/** Bits of the transaction's position in its block. */
export const RID_POSITION_BITS = 17;
/** Bits of the slot (highest): 2^34 slots is ~218 years at 400 ms a slot (mainnet is near 2^28.5). */
export const RID_SLOT_BITS = 34;

/** Largest instruction_index a record can carry. */
export const MAX_INSTRUCTION_INDEX = 2 ** RID_INSTRUCTION_BITS - 1;
/** Largest slot a record can carry; the last one (2^34 - 1) is where migration 110 put stored records that fit no id. */
export const MAX_RID_SLOT = 2n ** BigInt(RID_SLOT_BITS) - 2n;
/** Largest transaction_index a producer may send: positions below 2^16 are the chain's own. */
export const MAX_TRANSACTION_INDEX = 65_535;
/** The first position handed out by the per-slot counter (records sent without transaction_index). */
export const FIRST_COUNTED_POSITION = MAX_TRANSACTION_INDEX + 1;
/** Positions the counter can hand out in one slot. */
export const COUNTED_POSITIONS_PER_SLOT = 2 ** RID_POSITION_BITS - FIRST_COUNTED_POSITION;
