-- Hourly activity per protocol and instruction type: the source of instruction-type
-- statistics and of any aggregate grouped by instruction type (GraphQL groupBy
-- INSTRUCTION_TYPE with fee metrics). Key (protocol_name, instruction_type, hour_start):
-- answers group by the first two key columns over a time range. Sums, minima and maxima
-- are SimpleAggregateFunction (cheap merges); fee and compute-unit percentiles are t-digest
-- states, mergeable across hours and with states built from raw rows for ragged edges.
CREATE TABLE IF NOT EXISTS instruction_hourly
(
    protocol_name    LowCardinality(String),
    instruction_type LowCardinality(String),
    hour_start       DateTime('UTC'),
    tx_count         SimpleAggregateFunction(sum, UInt64),
    success_count    SimpleAggregateFunction(sum, UInt64),
    fee_sum          SimpleAggregateFunction(sum, UInt64),
    fee_min          SimpleAggregateFunction(min, UInt64),
    fee_max          SimpleAggregateFunction(max, UInt64),
    cu_sum           SimpleAggregateFunction(sum, UInt64),
    accounts_sum     SimpleAggregateFunction(sum, UInt64),
    cu_digest        AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt32),
    fee_digest       AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour_start)
ORDER BY (protocol_name, instruction_type, hour_start);

CREATE MATERIALIZED VIEW IF NOT EXISTS instruction_hourly_mv TO instruction_hourly AS
SELECT protocol_name,
       instruction_type,
       toStartOfHour(block_time)                             AS hour_start,
       count()                                               AS tx_count,
       countIf(success)                                      AS success_count,
       sum(fee)                                              AS fee_sum,
       min(fee)                                              AS fee_min,
       max(fee)                                              AS fee_max,
       sum(compute_units)                                    AS cu_sum,
       sum(accounts_count)                                   AS accounts_sum,
       quantilesTDigestState(0.5, 0.95, 0.99)(compute_units) AS cu_digest,
       quantilesTDigestState(0.5, 0.95, 0.99)(fee)           AS fee_digest
FROM transactions
GROUP BY protocol_name, instruction_type, hour_start;
