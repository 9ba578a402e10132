-- Records ordered by a time-ordered record id (issue 37), so that an address page is one
-- statement over a few granules. Why: address rows referenced records by the hash of their
-- signature, and a hash order scatters a page's 100 records over 100 granules of the
-- records table (100 point reads a page). The id is Solana's own position of a record,
--   rid = slot << 30 | position << 13 | instruction_index   (34 + 17 + 13 bits, core/limits/record-id.ts)
-- where position is the record's transaction_index in its block when the producer sends it
-- (0-65535), else a per-slot counter from 65536 assigned once by the writer that first
-- accepted the record (ingest/record-id.ts). An address's rows then sort by (address, rid):
-- a page is a few adjacent address rows and, because a busy address's records are close in
-- ledger order, a few granules of the records table (bench/RESULTS.md, "Time-ordered record
-- id (issue 37)"; docs/ingest-record-id.md for the limits).
--
-- Resumable: every statement is either idempotent or a copy that skips what an earlier,
-- killed run already wrote, and the ids of the records stored before 110 are a function of
-- the stored records alone (not of how far a killed run got), so a rerun gives the same ids.

-- transaction_index as the producer sent it (or the counter's position), read by the
-- engine from each JSON line and used only to compute rid: EPHEMERAL stores nothing.
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS transaction_index UInt32 EPHEMERAL 0;

ALTER TABLE transactions ADD COLUMN IF NOT EXISTS rid UInt64 DEFAULT 0;

-- A rerun after the last ALTER below (MATERIALIZED cannot be updated) turns it back.
ALTER TABLE transactions MODIFY COLUMN rid UInt64 DEFAULT 0;

-- The ids of the records stored before 110 (none carried transaction_index): the counter's
-- positions in order of the signature's hash within each slot, the instructions of one
-- transaction sharing its position. Records whose slot or instruction_index do not fit the
-- id (no chain has such slots; tests wrote some) go to the reserved last slot, numbered in
-- (slot, signature hash, instruction_index) order across its 30 low bits.
-- A Join table: the UPDATE below reads it by key (joinGet); it holds one entry a record
-- (~60 B in memory each: the whole store's at once, see docs/ingest-record-id.md for 1B).
CREATE TABLE IF NOT EXISTS rid_assign_110
(
    slot              UInt64,
    sig_key           UInt64,
    instruction_index UInt16,
    rid               UInt64
)
ENGINE = Join(ANY, LEFT, slot, sig_key, instruction_index);

TRUNCATE TABLE rid_assign_110;

INSERT INTO rid_assign_110
SELECT slot, sig_key, instruction_index,
       if(fits,
          bitOr(bitOr(bitShiftLeft(slot, 30), bitShiftLeft(toUInt64(65535 + pos), 13)), toUInt64(instruction_index)),
          bitOr(bitShiftLeft(toUInt64(17179869183), 30), toUInt64(pos - 1)))
FROM
(
    SELECT slot, sig_key, instruction_index, fits,
           if(fits, dense_rank() OVER (PARTITION BY fits, slot ORDER BY sig_key),
                    row_number() OVER (PARTITION BY fits ORDER BY slot, sig_key, instruction_index)) AS pos
    FROM
    (
        SELECT DISTINCT slot, cityHash64(signature) AS sig_key, instruction_index,
               slot < 17179869183 AND instruction_index < 8192 AS fits
        FROM transactions
    )
);

-- Only rows not done yet (a killed run's finished parts are skipped). A mutation is kept
-- by the engine across a restart and finishes then; the same ids either way. It runs outside
-- the session, so the Join table is named with its database (warehouse/migrate.ts fills it in).
ALTER TABLE transactions UPDATE rid = joinGet('{current_database}.rid_assign_110', 'rid', slot, cityHash64(signature), instruction_index)
WHERE rid = 0 SETTINGS mutations_sync = 2;

DROP TABLE IF EXISTS rid_assign_110;

-- From here on the engine computes rid from each inserted row; a client can neither send it
-- (not in the insert's columns) nor see it in SELECT * (SPEC's answers unchanged).
ALTER TABLE transactions MODIFY COLUMN rid UInt64 MATERIALIZED bitOr(bitOr(bitShiftLeft(slot, 30), bitShiftLeft(toUInt64(bitAnd(transaction_index, 131071)), 13)), toUInt64(bitAnd(instruction_index, 8191)));

-- Records by id: the same JSON array as tx_by_signature_v3 (warehouse/signature-records.ts
-- reads it), in ledger order. Same small granules and compact parts as 090, for the same
-- reason: a page of a quiet address still reads one granule a record.
CREATE TABLE IF NOT EXISTS tx_by_rid
(
    rid    UInt64,
    record String CODEC(ZSTD(1))
)
ENGINE = MergeTree
ORDER BY rid
SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192,
    min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776, merge_selector_base = 2;

-- As 021: the view captures inserts before the copy, the copy skips what it captured.
CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_rid_mv TO tx_by_rid AS
SELECT rid,
       toJSONString((signature, instruction_index, toString(slot), toUInt32(block_time), program_id, protocol_name,
                     instruction_type, toString(fee), compute_units, accounts_count, success)) AS record
FROM transactions;

INSERT INTO tx_by_rid
SELECT rid,
       toJSONString((signature, instruction_index, toString(slot), toUInt32(block_time), program_id, protocol_name,
                     instruction_type, toString(fee), compute_units, accounts_count, success)) AS record
FROM transactions
WHERE rid NOT IN (SELECT rid FROM tx_by_rid);

-- The way from a signature to its records (getTransaction, de-duplication, signature
-- filters): (signature hash, instruction) -> rid, then the record in tx_by_rid. 17 B a
-- record, where 090's signature-ordered copy of every record took 105 B; a lookup costs
-- ~1.35x the engine time in memory, ~1.5x past memory (two granules in two tables instead
-- of one; bench/RESULTS.md, "Time-ordered record id (issue 37)": the bytes budget needs it).
-- Same small granules and compact parts as tx_by_rid: a lookup reads one granule a key.
CREATE TABLE IF NOT EXISTS tx_rid_by_sig
(
    sig_key           UInt64,
    instruction_index UInt16,
    rid               UInt64
)
ENGINE = MergeTree
ORDER BY (sig_key, instruction_index)
SETTINGS index_granularity = 128, min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776;

CREATE MATERIALIZED VIEW IF NOT EXISTS tx_rid_by_sig_mv TO tx_rid_by_sig AS
SELECT cityHash64(signature) AS sig_key, instruction_index, rid
FROM transactions;

INSERT INTO tx_rid_by_sig
SELECT cityHash64(signature) AS sig_key, instruction_index, rid
FROM transactions
WHERE (cityHash64(signature), instruction_index) NOT IN (SELECT sig_key, instruction_index FROM tx_rid_by_sig);

-- Address rows, reduced: (address hash, rid) and what the page filters read (time, program,
-- protocol, status), no signature hash, no address text. 128 bits of sipHash for the
-- address: with no text to compare, two addresses must not share a key (64 bits would give
-- a ~1e-4 chance of one collision among 1e8 addresses). Sorted by (address, rid): one
-- address's history is one key range in ledger order, read either way for either order.
CREATE TABLE IF NOT EXISTS tx_by_address_v2
(
    address_key   UInt128,
    rid           UInt64 CODEC(Delta, ZSTD(1)),
    block_time    DateTime('UTC') CODEC(Delta, ZSTD(1)),
    program_id    LowCardinality(String),
    protocol_name LowCardinality(String),
    success       Bool
)
ENGINE = MergeTree
ORDER BY (address_key, rid)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_address_v2_mv TO tx_by_address_v2 AS
SELECT reinterpretAsUInt128(sipHash128(arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))))) AS address_key,
       rid, block_time, program_id, protocol_name, success
FROM transactions;

-- A record's address rows come from one source row, so they are written together.
INSERT INTO tx_by_address_v2
SELECT reinterpretAsUInt128(sipHash128(arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))))) AS address_key,
       rid, block_time, program_id, protocol_name, success
FROM transactions
WHERE rid NOT IN (SELECT rid FROM tx_by_address_v2);

DROP VIEW IF EXISTS tx_by_address_mv;

DROP TABLE IF EXISTS tx_by_address;

-- Last: 090's records by signature, replaced by tx_rid_by_sig and tx_by_rid. A run killed
-- before here still holds every record by signature until the index is whole.
DROP VIEW IF EXISTS tx_by_signature_v3_mv;

DROP TABLE IF EXISTS tx_by_signature_v3;
