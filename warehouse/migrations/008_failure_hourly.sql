-- Hourly failures per protocol, instruction type and error message: the source of failure
-- analysis (which errors, where, how often) without scanning the base table. Only failed
-- records reach it (a few percent), so it stays small. Key (protocol_name, hour_start,
-- instruction_type, error_message): failure questions filter by protocol and time first,
-- then group by type and message. A plain count is the only state needed.
CREATE TABLE IF NOT EXISTS failure_hourly
(
    protocol_name    LowCardinality(String),
    hour_start       DateTime('UTC'),
    instruction_type LowCardinality(String),
    error_message    String,
    failures         SimpleAggregateFunction(sum, UInt64),
    fee_sum          SimpleAggregateFunction(sum, UInt64),
    cu_sum           SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour_start)
ORDER BY (protocol_name, hour_start, instruction_type, error_message);

CREATE MATERIALIZED VIEW IF NOT EXISTS failure_hourly_mv TO failure_hourly AS
SELECT protocol_name,
       toStartOfHour(block_time) AS hour_start,
       instruction_type,
       error_message,
       count()                   AS failures,
       sum(fee)                  AS fee_sum,
       sum(compute_units)        AS cu_sum
FROM transactions
WHERE NOT success
GROUP BY protocol_name, hour_start, instruction_type, error_message;
