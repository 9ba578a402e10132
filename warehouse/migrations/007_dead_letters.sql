-- Dead-letter sink: every record the pipeline rejected, with why and where it came from,
-- so nothing is silently lost. Ordered by time for "what was rejected recently"; kept
-- 30 days, long enough to replay a fixed upstream.
CREATE TABLE IF NOT EXISTS dead_letters
(
    rejected_at DateTime64(3, 'UTC') DEFAULT now64(3),
    source      LowCardinality(String),
    position    String,
    reason      String,
    payload     String
)
ENGINE = MergeTree
ORDER BY rejected_at
TTL toDateTime(rejected_at) + INTERVAL 30 DAY;
