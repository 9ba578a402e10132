-- The cost of every answer (issue 26): per key, interface, method and minute, the cost in the
-- plan's units and the rows and bytes the engine read, summed like the counts beside them
-- (SimpleAggregateFunction(sum)), so the dashboard's usage page shows cost per key and per
-- method over time. Why columns with defaults rather than a new table: usage is already one
-- row per (key, minute, interface, method); rows written before this migration cost 0.
ALTER TABLE api_key_usage ADD COLUMN IF NOT EXISTS cost SimpleAggregateFunction(sum, UInt64) DEFAULT 0 AFTER rate_limited;
ALTER TABLE api_key_usage ADD COLUMN IF NOT EXISTS rows_read SimpleAggregateFunction(sum, UInt64) DEFAULT 0 AFTER cost;
ALTER TABLE api_key_usage ADD COLUMN IF NOT EXISTS bytes_read SimpleAggregateFunction(sum, UInt64) DEFAULT 0 AFTER rows_read;
