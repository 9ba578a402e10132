-- Fewest and most compute units of a record per hour, in both hourly views (issue 27:
-- MIN_COMPUTE_UNITS and MAX_COMPUTE_UNITS answered from views, with exact edges).
-- Why this shape: the new columns default to min's and max's neutral values (4294967295
-- and 0), so every row written before, and every row the views write, merges as if it had
-- no opinion; the views then compute them for new inserts (MODIFY QUERY replaces a view's
-- SELECT in one step: no insert is missed and none is counted twice), and the backfill adds,
-- per hour of the base table, a row carrying only the extremes, every other column neutral
-- (sums 0, fee_min and first_seen at their largest, empty states). min and max are
-- idempotent: an hour written by the new view and by the backfill merges to the same
-- figure, so the backfill may overlap new inserts without a gap or a double count, and no
-- figure of the old columns changes (old answers stay identical).
ALTER TABLE protocol_hourly ADD COLUMN IF NOT EXISTS cu_min SimpleAggregateFunction(min, UInt32) DEFAULT 4294967295, ADD COLUMN IF NOT EXISTS cu_max SimpleAggregateFunction(max, UInt32) DEFAULT 0;

ALTER TABLE instruction_hourly ADD COLUMN IF NOT EXISTS cu_min SimpleAggregateFunction(min, UInt32) DEFAULT 4294967295, ADD COLUMN IF NOT EXISTS cu_max SimpleAggregateFunction(max, UInt32) DEFAULT 0;

-- The views' SELECTs of 004 and 005 with the two new columns last (the table's column
-- order: view repair re-inserts a view's SELECT by position).
ALTER TABLE protocol_hourly_mv MODIFY QUERY
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
       quantilesTDigestState(0.5, 0.95, 0.99)(fee)                 AS fee_digest,
       min(compute_units)                                          AS cu_min,
       max(compute_units)                                          AS cu_max
FROM transactions
GROUP BY protocol_name, hour_start;

ALTER TABLE instruction_hourly_mv MODIFY QUERY
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
       quantilesTDigestState(0.5, 0.95, 0.99)(fee)           AS fee_digest,
       min(compute_units)                                    AS cu_min,
       max(compute_units)                                    AS cu_max
FROM transactions
GROUP BY protocol_name, instruction_type, hour_start;

-- The backfill: the extremes of every stored hour, other columns neutral (their defaults,
-- and the largest values for the two minima).
INSERT INTO protocol_hourly (protocol_name, hour_start, fee_min, first_seen, cu_min, cu_max)
SELECT protocol_name, toStartOfHour(block_time) AS hour_start, toUInt64(18446744073709551615), toDateTime(4294967295, 'UTC'),
       min(compute_units), max(compute_units)
FROM transactions
GROUP BY protocol_name, hour_start;

INSERT INTO instruction_hourly (protocol_name, instruction_type, hour_start, fee_min, cu_min, cu_max)
SELECT protocol_name, instruction_type, toStartOfHour(block_time) AS hour_start, toUInt64(18446744073709551615),
       min(compute_units), max(compute_units)
FROM transactions
GROUP BY protocol_name, instruction_type, hour_start;
