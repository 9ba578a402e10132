-- Base table: every ingested record, one row per identity (signature, instruction_index).
-- Key (protocol_name, block_time, ...): listings and the ragged edges of every aggregate
-- filter by protocol and a time range, so both prune to a few granules. Point lookups by
-- signature or account use the lookup tables (002, 003) rather than this key.
-- Signatures and account lists are random base58: ZSTD's entropy stage stores them in ~6
-- bits a character where LZ4 cannot shrink them at all.
-- date, hour and day_of_week derive from block_time in UTC; the pipeline never sends them.
CREATE TABLE IF NOT EXISTS transactions
(
    signature         String CODEC(ZSTD(1)),
    instruction_index UInt16,
    slot              UInt64,
    block_time        DateTime('UTC'),
    date              Date DEFAULT toDate(block_time),
    hour              UInt8 DEFAULT toHour(block_time),
    day_of_week       UInt8 DEFAULT toDayOfWeek(block_time),
    program_id        LowCardinality(String),
    protocol_name     LowCardinality(String),
    instruction_type  LowCardinality(String),
    fee               UInt64,
    compute_units     UInt32,
    accounts          Array(String) CODEC(ZSTD(1)),
    accounts_count    UInt16,
    success           Bool,
    error_message     String DEFAULT '' CODEC(ZSTD(1)),
    log_messages      String DEFAULT '' CODEC(ZSTD(1)),
    raw_data          String DEFAULT '' CODEC(ZSTD(1)),
    ingested_at       DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(block_time)
ORDER BY (protocol_name, block_time, signature, instruction_index);
