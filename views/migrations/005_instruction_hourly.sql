-- Hourly activity per protocol and instruction type: the source of instruction-type
-- statistics. Key (protocol_name, instruction_type, hour_start): answers group by the
-- first two key columns over a time range. Only sums are needed, so every column is a
-- SimpleAggregateFunction and merges stay cheap.
CREATE TABLE IF NOT EXISTS instruction_hourly
(
    protocol_name    LowCardinality(String),
    instruction_type LowCardinality(String),
    hour_start       DateTime('UTC'),
    tx_count         SimpleAggregateFunction(sum, UInt64),
    success_count    SimpleAggregateFunction(sum, UInt64),
    fee_sum          SimpleAggregateFunction(sum, UInt64),
    cu_sum           SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour_start)
ORDER BY (protocol_name, instruction_type, hour_start);

CREATE MATERIALIZED VIEW IF NOT EXISTS instruction_hourly_mv TO instruction_hourly AS
SELECT protocol_name,
       instruction_type,
       toStartOfHour(block_time) AS hour_start,
       count()                   AS tx_count,
       countIf(success)          AS success_count,
       sum(fee)                  AS fee_sum,
       sum(compute_units)        AS cu_sum
FROM transactions
GROUP BY protocol_name, instruction_type, hour_start;
