-- Point reads that stay fast past memory (issue 25): tx_by_signature_v2 in compact parts,
-- kept in few parts. Why: sig_key is a hash, so every part spans the whole key range and a
-- lookup reads one granule in every active part (10 parts: 10x the time of one), and in a
-- wide part each of the 12 columns is its own file, so past memory one lookup is ~12
-- scattered disk reads. A compact part keeps a granule's columns side by side in one file:
-- one read per key (50-key batches 2.8x faster under a cap of a third of the store, +11 B a
-- record). merge_selector_base 2 (default 5) merges parts of similar size sooner: 2 parts
-- instead of 7 once ingest pauses, for ~1.5x the rows rewritten by merges. No forced merges
-- by age: with min_age_to_force_merge_seconds set, reads saw ~twice the parts during steady
-- ingest in the same simulation, and forcing on subsets of parts would rewrite a 90 GB part
-- at 1B as each small part ages. Measured in bench/RESULTS.md ("Point store"). The cost on
-- the other side: a read of one column of the whole table (ingest's stored keys, once at
-- start) reads the whole part from disk when cold (1.1 GB instead of 85 MB at 10M).
-- Same table name, key and columns; only the parts are rewritten.
ALTER TABLE tx_by_signature_v2 MODIFY SETTING min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776, merge_selector_base = 2;

-- A merge never turns a wide part compact, so the rows are rewritten once: into a compact
-- twin of the table, then swapped in whole (REPLACE PARTITION attaches the twin's parts).
CREATE TABLE IF NOT EXISTS tx_by_signature_v2_compact
(
    sig_key           UInt64,
    signature         String CODEC(ZSTD(1)),
    instruction_index UInt16,
    slot              UInt64,
    block_time        DateTime('UTC'),
    program_id        LowCardinality(String),
    protocol_name     LowCardinality(String),
    instruction_type  LowCardinality(String),
    fee               UInt64,
    compute_units     UInt32,
    accounts_count    UInt16,
    success           Bool
)
ENGINE = MergeTree
ORDER BY (sig_key, instruction_index)
SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192, min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776, merge_selector_base = 2;

-- As 021: the twin captures inserts before the copy, and the copy skips what it captured,
-- so every record is in the twin once when the swap comes, however inserts interleave.
CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_signature_v2_compact_mv TO tx_by_signature_v2_compact AS
SELECT cityHash64(signature) AS sig_key, signature, instruction_index, slot, block_time, program_id,
       protocol_name, instruction_type, fee, compute_units, accounts_count, success
FROM transactions;

INSERT INTO tx_by_signature_v2_compact
SELECT sig_key, signature, instruction_index, slot, block_time, program_id, protocol_name,
       instruction_type, fee, compute_units, accounts_count, success
FROM tx_by_signature_v2
WHERE (sig_key, instruction_index) NOT IN (SELECT sig_key, instruction_index FROM tx_by_signature_v2_compact);

-- An empty twin means an empty table (the twin holds every record of it): swap anyway.
ALTER TABLE tx_by_signature_v2 REPLACE PARTITION tuple() FROM tx_by_signature_v2_compact SETTINGS allow_replace_partition_from_empty_source = 1;

DROP VIEW IF EXISTS tx_by_signature_v2_compact_mv;

DROP TABLE IF EXISTS tx_by_signature_v2_compact;
