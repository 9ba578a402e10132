-- Hourly activity per protocol: the source of protocol stats, comparison, performance,
-- top protocols, activity buckets, fee statistics and global stats.
-- Key (protocol_name, hour_start): every aggregate reads one protocol (or all) over a
-- time range, so a full-history answer merges at most 24 rows per protocol-day.
-- Sums, minima and maxima are SimpleAggregateFunction (merge = the same function, cheap);
-- distinct counts are uniqExact states so they stay exact across hours; percentiles are
-- t-digest states, mergeable across hours and with states built from raw rows for the
-- ragged edges of a range (approximate by design, documented in the README).
CREATE TABLE IF NOT EXISTS protocol_hourly
(
    protocol_name     LowCardinality(String),
    hour_start        DateTime('UTC'),
    tx_count          SimpleAggregateFunction(sum, UInt64),
    success_count     SimpleAggregateFunction(sum, UInt64),
    fee_sum           SimpleAggregateFunction(sum, UInt64),
    fee_min           SimpleAggregateFunction(min, UInt64),
    fee_max           SimpleAggregateFunction(max, UInt64),
    cu_sum            SimpleAggregateFunction(sum, UInt64),
    accounts_sum      SimpleAggregateFunction(sum, UInt64),
    first_seen        SimpleAggregateFunction(min, DateTime('UTC')),
    last_seen         SimpleAggregateFunction(max, DateTime('UTC')),
    max_slot          SimpleAggregateFunction(max, UInt64),
    instruction_types AggregateFunction(uniqExact, String),
    programs          AggregateFunction(uniqExact, String),
    cu_digest         AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt32),
    fee_digest        AggregateFunction(quantilesTDigest(0.5, 0.95, 0.99), UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour_start)
ORDER BY (protocol_name, hour_start);

CREATE MATERIALIZED VIEW IF NOT EXISTS protocol_hourly_mv TO protocol_hourly AS
SELECT protocol_name,
       toStartOfHour(block_time)                                  AS hour_start,
       count()                                                     AS tx_count,
       countIf(success)                                            AS success_count,
       sum(fee)                                                    AS fee_sum,
       min(fee)                                                    AS fee_min,
       max(fee)                                                    AS fee_max,
       sum(compute_units)                                          AS cu_sum,
       sum(accounts_count)                                         AS accounts_sum,
       min(block_time)                                             AS first_seen,
       max(block_time)                                             AS last_seen,
       max(slot)                                                   AS max_slot,
       uniqExactState(toString(instruction_type))                  AS instruction_types,
       uniqExactState(toString(program_id))                        AS programs,
       quantilesTDigestState(0.5, 0.95, 0.99)(compute_units)       AS cu_digest,
       quantilesTDigestState(0.5, 0.95, 0.99)(fee)                 AS fee_digest
FROM transactions
GROUP BY protocol_name, hour_start;
