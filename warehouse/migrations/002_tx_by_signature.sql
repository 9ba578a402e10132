-- Lookup by signature (getTransaction, the signatures filter, address-listing details).
-- Key (sig_key, instruction_index) with sig_key = cityHash64(signature): a point lookup
-- reads one small granule; the lowest instruction_index of a signature comes first; and
-- tx_by_address can refer to a record by the 8-byte key instead of an 88-byte signature.
-- Readers always also compare signature itself, so a hash collision cannot mix records.
-- A smaller index granularity keeps each point read to ~1k rows. Only the columns a
-- Transaction object needs are copied.
CREATE TABLE IF NOT EXISTS tx_by_signature
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
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS tx_by_signature_mv TO tx_by_signature AS
SELECT cityHash64(signature) AS sig_key, signature, instruction_index, slot, block_time, program_id,
       protocol_name, instruction_type, fee, compute_units, accounts_count, success
FROM transactions;
