-- Ingest journal: one 'begin' row before each insert into transactions and one 'done' row
-- after it. An INSERT with materialized views is not atomic across tables (the base
-- table's parts commit first, then each view's), so a process killed in between leaves
-- views behind the base table, and a replay would then duplicate rows. A 'begin' without
-- 'done' marks the (protocol, hour) buckets whose views must be rebuilt from the base
-- table before ingest resumes (views/view-repair.ts). Kept 7 days: only recent entries
-- can be unfinished.
CREATE TABLE IF NOT EXISTS ingest_journal
(
    batch_id String,
    writer   LowCardinality(String),
    state    Enum8('begin' = 1, 'done' = 2),
    at       DateTime64(3, 'UTC') DEFAULT now64(3),
    buckets  Array(Tuple(protocol_name String, hour_start DateTime('UTC')))
)
ENGINE = MergeTree
ORDER BY (writer, batch_id, state)
TTL toDateTime(at) + INTERVAL 7 DAY;
