-- The read-only ClickHouse user of client SQL (POST /v1/query) on the cluster: the same user,
-- profile, grants and row policy as deploy/clickhouse/sql-sandbox-user.sql (read that file's
-- header for why), plus the shards' local tables. Run once, on any node, as an administrator,
-- after the service's migrations ran (the tables must exist), replacing __SQL_PASSWORD__:
--   clickhouse-client --host ch-s1-r1 --multiquery < deploy/cluster/sql-sandbox-user.sql
-- Users, grants and policies live in the replicated access storage (Keeper:
-- <user_directories><replicated> in clickhouse/cluster.xml), so every node has them at once.
-- Why the local tables too: a query through a Distributed table runs on each shard as the
-- user who asked (remote_servers' <secret>), reading <table>_local there; the grant lets it
-- and the row policy on the local table hides inactive protocols on every shard.

CREATE SETTINGS PROFILE IF NOT EXISTS txa_sql_sandbox SETTINGS
    readonly = 2 CONST,
    max_execution_time = 30 MAX 30,
    max_memory_usage = 2147483648 MAX 2147483648,
    max_threads = 1 MAX 4,
    max_rows_to_read = 100000000 MAX 10000000000,
    max_result_rows = 10000 MAX 10000,
    max_result_bytes = 33554432 MAX 33554432,
    allow_introspection_functions = 0 CONST,
    allow_ddl = 0 CONST;

CREATE USER IF NOT EXISTS txa_sql IDENTIFIED WITH sha256_password BY '__SQL_PASSWORD__'
    SETTINGS PROFILE 'txa_sql_sandbox';

GRANT SELECT ON default.transactions TO txa_sql;
GRANT SELECT ON default.protocol_hourly TO txa_sql;
GRANT SELECT ON default.instruction_hourly TO txa_sql;
GRANT SELECT ON default.transactions_local TO txa_sql;
GRANT SELECT ON default.protocol_hourly_local TO txa_sql;
GRANT SELECT ON default.instruction_hourly_local TO txa_sql;
GRANT SELECT(name, alias_to, case_insensitive, is_aggregate) ON system.functions TO txa_sql;
GRANT SELECT(database, name) ON system.tables TO txa_sql;
GRANT SELECT(database, table, rows, active) ON system.parts TO txa_sql;

CREATE ROW POLICY IF NOT EXISTS txa_sql_active_protocols
    ON default.transactions, default.protocol_hourly, default.instruction_hourly,
       default.transactions_local, default.protocol_hourly_local, default.instruction_hourly_local
    FOR SELECT USING protocol_name IN (SELECT protocol_name FROM default.protocols FINAL WHERE active)
    TO txa_sql;
