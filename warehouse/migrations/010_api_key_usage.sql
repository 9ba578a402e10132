-- Per-key usage: requests per key, interface and method, per minute, written in batches
-- by each API process (several rows for one minute from several processes or flushes
-- are merged by the engine and by sum() in every read).
-- Key (key_id, minute, interface, method): the operator reads one key over a time range,
-- which prunes to that key's granules; the rest of the key makes rows of one minute merge.
-- SimpleAggregateFunction columns merge with the same function, so reads stay exact
-- whether or not a background merge has happened. Kept 90 days.
CREATE TABLE IF NOT EXISTS api_key_usage
(
    key_id        String,
    minute        DateTime('UTC'),
    interface     LowCardinality(String),
    method        LowCardinality(String),
    requests      SimpleAggregateFunction(sum, UInt64),
    errors        SimpleAggregateFunction(sum, UInt64),
    rate_limited  SimpleAggregateFunction(sum, UInt64),
    last_used_at  SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(minute)
ORDER BY (key_id, minute, interface, method)
TTL minute + INTERVAL 90 DAY;
