-- The identities of stored records in time order, for ingest's de-duplication (issue 40).
-- Why: de-duplication asked "which of this batch's records are stored?" either of an
-- in-process Bloom filter of every stored sig_key (memory growing with the store, ~1.25 GB
-- at 1B, and a read of every key at each start: 51 s at 100M) or of tx_by_signature_v3,
-- whose key is a hash: every batch's keys land in random granules of every part, so at 100M
-- the pipeline ran at 0.10 of the engine's insert. Records arrive in time order, so a table
-- keyed by (block_time, sig_key, instruction_index) answers the same question from the
-- granules of the batch's own seconds: a live batch reads the newest granule or two of the
-- newest parts, whatever the store's size, and the process keeps nothing between batches.
-- A record's block_time is part of what it is (a chain record's signature has one block);
-- when the record id (slot, transaction index, instruction index) lands, this key becomes
-- that id and the lookup an `id IN` set, the same shape.
-- protocol_name is here for the view repair (warehouse/view-repair.ts places rows in
-- (protocol, hour) buckets by protocol_name and block_time); LowCardinality, ~1 B a row.
-- ~15 B a record before compression: ~15 GB at 1B, against ~300 B a record for the store.
-- 1024-row granules: a lookup reads ~14 KB a granule, not 8192 rows' worth.
CREATE TABLE IF NOT EXISTS ingest_keys
(
    block_time        DateTime('UTC') CODEC(Delta, ZSTD(1)),
    sig_key           UInt64,
    instruction_index UInt16,
    protocol_name     LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(block_time)
ORDER BY (block_time, sig_key, instruction_index)
SETTINGS index_granularity = 1024;

-- The view starts capturing inserts before the copy below, so nothing inserted while this
-- migration runs is missed (as 021).
CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_keys_mv TO ingest_keys AS
SELECT block_time, cityHash64(signature) AS sig_key, instruction_index, protocol_name
FROM transactions;

-- Copy the identities already stored, minus what the view captured meanwhile: rows inserted
-- before this statement's snapshot are in both (skipped) or only in the base table (copied).
INSERT INTO ingest_keys
SELECT block_time, cityHash64(signature) AS sig_key, instruction_index, protocol_name
FROM transactions
WHERE (block_time, sig_key, instruction_index) NOT IN (SELECT block_time, sig_key, instruction_index FROM ingest_keys);
