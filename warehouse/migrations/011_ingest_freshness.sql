-- Ingest freshness for /metrics and /health: the newest block_time and ingested_at per
-- protocol, kept by a materialized view so that reading them costs one tiny table rather
-- than a scan of transactions.ingested_at (not in any sort key; billions of rows).
-- Key (protocol_name): one row per protocol after merges; max() in reads merges the rest.
CREATE TABLE IF NOT EXISTS ingest_freshness
(
    protocol_name   LowCardinality(String),
    newest_block    SimpleAggregateFunction(max, DateTime('UTC')),
    newest_ingested SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY protocol_name;

CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_freshness_mv TO ingest_freshness AS
SELECT protocol_name, max(block_time) AS newest_block, max(ingested_at) AS newest_ingested
FROM transactions
GROUP BY protocol_name;

-- Rows stored before this migration: one scan, at migration time only.
INSERT INTO ingest_freshness
SELECT protocol_name, max(block_time), max(ingested_at)
FROM transactions
GROUP BY protocol_name;
