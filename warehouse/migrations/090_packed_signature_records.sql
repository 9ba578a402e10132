-- Lookup by signature, third layout; replaces 021's tx_by_signature_v2 (issue 25: point
-- reads past memory and over several parts). Same key, same granules and blocks, same
-- compact parts and merge policy as 080 left it; two changes, each measured in
-- bench/RESULTS.md ("A record in one column"):
--  - The record in one column: a JSON array (warehouse/signature-records.ts reads it) in
--    place of 10 columns. A point read decodes one granule of every column it reads; three
--    of them LowCardinality, whose state is set up per granule. In one column a read of 50
--    keys took 5.0-5.7 ms against 8.5-10.5 (one part, 10M records), one key 1.3 against 2.2,
--    for the same 102.6 B a record (ZSTD compresses the array as well as the columns).
--    instruction_index stays a column (it is in the key) and is in the array too, so a
--    read needs the array alone; sig_key is recomputed from the signature where wanted.
--    Readers that filter on fields (signature filters of listings and counts, ingest's
--    de-duplication) read them through one decoding subquery, after the key has chosen
--    a handful of rows.
--  - A Bloom filter of sig_key per granule: sig_key is a hash, so every part spans the
--    whole key range, and without it a lookup reads one granule in every active part
--    though its record is in one; a small part costs a key about what the largest does
--    (at 100M, one part of 100M rows and two small ones: 13.6 ms for 50 keys, 6.2 in the
--    largest alone). False-positive rate 0.001 because a batch's `IN` set of n keys passes
--    a granule's filter with probability ~n·p: at 0.01 a 50-key batch still read ~40 % of
--    the granules it should skip; 0.001 ~5 %. GRANULARITY 1: one filter per granule, the
--    unit the primary key selects. ~1.7 B a record.
CREATE TABLE IF NOT EXISTS tx_by_signature_v3
(
    sig_key           UInt64,
    instruction_index UInt16,
    record            String CODEC(ZSTD(1)),
    INDEX sig_key_bloom sig_key TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = MergeTree
ORDER BY (sig_key, instruction_index)
SETTINGS index_granularity = 128, min_compress_block_size = 4096, max_compress_block_size = 8192,
    min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1099511627776, merge_selector_base = 2;

-- The array: [signature, instruction_index, slot as text, block_time as Unix seconds,
-- program_id, protocol_name, instruction_type, fee as text, compute_units, accounts_count,
-- success]. 64-bit numbers as text, so a reader in any language takes them exactly.
-- As 021: the new view starts capturing inserts before the copy.
CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_signature_v3_mv TO tx_by_signature_v3 AS
SELECT cityHash64(signature) AS sig_key, instruction_index,
       toJSONString((signature, instruction_index, toString(slot), toUInt32(block_time), program_id, protocol_name,
                     instruction_type, toString(fee), compute_units, accounts_count, success)) AS record
FROM transactions;

-- Copy what 021's table holds, minus what the new view already captured (as 021).
INSERT INTO tx_by_signature_v3
SELECT sig_key, instruction_index,
       toJSONString((signature, instruction_index, toString(slot), toUInt32(block_time), program_id, protocol_name,
                     instruction_type, toString(fee), compute_units, accounts_count, success)) AS record
FROM tx_by_signature_v2
WHERE (sig_key, instruction_index) NOT IN (SELECT sig_key, instruction_index FROM tx_by_signature_v3);

DROP VIEW IF EXISTS tx_by_signature_v2_mv;

DROP TABLE IF EXISTS tx_by_signature_v2;
