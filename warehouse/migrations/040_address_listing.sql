-- An address's history with the columns its listing returns (getTransactionsForAddress), so a
-- page is one range read. Why: with 003's narrow references a page of 100 was two reads, the
-- references (one key range) and then 100 detail rows from tx_by_signature_v2, each in a
-- granule of its own: ~37 of ~45 ms per page went to those scattered detail reads. Here a
-- page is the next 100 rows of one key range (bench/RESULTS.md, "Hot-address history").
-- Key: 003's, (address_key, block_time, sig_key, instruction_index), so the listing's order,
-- its keyset cursor and its answers are unchanged. sig_key (cityHash64(signature)) is stored
-- although the signature is (a key expression would save ~7 B per row): sorting by a stored
-- key lets the engine read the signature for the page's rows only (lazy column reads),
-- where sorting by cityHash64(signature) needs the signature of every row of the blocks read.
-- Columns: only what a listing answers or filters on (no accounts, error or log text), and
-- the address itself, compared by readers so a collision of address_key cannot mix two
-- addresses. The signature is most of the size (~64 B per row that no codec shrinks: random
-- base58); slot and block_time follow the key's time order, so Delta makes them nearly free.
-- 256-row granules: a page reads one granule per part and column instead of 2048 rows of
-- 88-byte signatures (the primary index grows to ~4 MB per 50M rows, held in memory).
-- tx_by_address (003) stays: counts (transactionDetails "none") read its narrower columns.
CREATE TABLE IF NOT EXISTS tx_by_address_listing
(
    address_key       UInt64,
    address           String,
    block_time        DateTime('UTC') CODEC(Delta, ZSTD(1)),
    sig_key           UInt64,
    instruction_index UInt16,
    signature         String CODEC(ZSTD(1)),
    slot              UInt64 CODEC(Delta, ZSTD(1)),
    program_id        LowCardinality(String),
    protocol_name     LowCardinality(String),
    instruction_type  LowCardinality(String),
    fee               UInt64 CODEC(ZSTD(1)),
    compute_units     UInt32 CODEC(ZSTD(1)),
    accounts_count    UInt16,
    success           Bool
)
ENGINE = MergeTree
ORDER BY (address_key, block_time, sig_key, instruction_index)
SETTINGS index_granularity = 256;

-- Created before the copy below, so nothing inserted while this migration runs is missed.
CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_address_listing_mv TO tx_by_address_listing AS
SELECT cityHash64(address) AS address_key,
       arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS address,
       block_time, cityHash64(signature) AS sig_key, instruction_index, signature, slot, program_id, protocol_name, instruction_type,
       fee, compute_units, accounts_count, success
FROM transactions;

-- Records stored before this migration, minus those the view already captured (a record's
-- address rows reach the view in one block, so a record is either wholly there or absent).
-- As in 021: no duplicates, no gaps.
INSERT INTO tx_by_address_listing
SELECT cityHash64(address) AS address_key,
       arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS address,
       block_time, cityHash64(signature) AS sig_key, instruction_index, signature, slot, program_id, protocol_name, instruction_type,
       fee, compute_units, accounts_count, success
FROM transactions
WHERE (signature, instruction_index) NOT IN (SELECT signature, instruction_index FROM tx_by_address_listing);
