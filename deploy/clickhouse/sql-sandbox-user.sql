-- The ClickHouse user that client SQL (POST /v1/query) runs as in server mode: set
-- CLICKHOUSE_SQL_USER=txa_sql and CLICKHOUSE_SQL_PASSWORD to the password below, and run
-- this file once as an administrator (clickhouse-client --multiquery < sql-sandbox-user.sql),
-- after replacing __SQL_PASSWORD__ and, if the service's database is not `default`, the
-- database name.
--
-- Why: in embedded mode the guard (api/services/sql/sql-guard.ts) is the only wall. A server has
-- users and grants, so there the engine enforces the same rules a second time: SELECT on the
-- three published tables only (not the keys, the registry, the lookups or the dead letters),
-- a row policy hiding inactive protocols as every interface does, and a settings profile
-- whose constraints stop a query from raising its own limits. readonly = 2 (reads only,
-- settings may change within the constraints) because the service sends per-query limits;
-- with this user configured it sends no readonly setting of its own.

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

-- The published tables, and the catalogue columns the sandbox reads to check and cost a query.
GRANT SELECT ON default.transactions TO txa_sql;
GRANT SELECT ON default.protocol_hourly TO txa_sql;
GRANT SELECT ON default.instruction_hourly TO txa_sql;
GRANT SELECT(name, alias_to, case_insensitive, is_aggregate) ON system.functions TO txa_sql;
GRANT SELECT(database, name) ON system.tables TO txa_sql;
GRANT SELECT(database, table, rows, active) ON system.parts TO txa_sql;

-- Records of inactive protocols stay hidden however the query is written.
CREATE ROW POLICY IF NOT EXISTS txa_sql_active_protocols
    ON default.transactions, default.protocol_hourly, default.instruction_hourly
    FOR SELECT USING protocol_name IN (SELECT protocol_name FROM default.protocols FINAL WHERE active)
    TO txa_sql;
