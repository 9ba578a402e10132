// The server-mode read-only user for client SQL (deploy/clickhouse/sql-sandbox-user.sql).
// No ClickHouse server can run on these machines, so this checks what can be checked here:
// every statement parses with the engine's own parser, the grants name exactly the
// published tables, the profile's limits are the service's, and with the user configured
// the service sends no readonly setting (the profile's readonly = 2 CONST would refuse it).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/load-config.ts';
import { PUBLISHED_TABLES, SQL_MAX_LIMIT } from '../../api/services/sql/sql-guard.ts';
import { SQL_MAX_RESPONSE_BYTES, SqlSandbox } from '../../api/services/sql/sql-sandbox.ts';
import { PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { startServices } from '../support/services.ts';

const file = readFileSync(new URL('../../deploy/clickhouse/sql-sandbox-user.sql', import.meta.url), 'utf8');
const statements = file
  .replace(/^--.*$/gm, '')
  .split(';')
  .map((s) => s.trim())
  .filter((s) => s !== '');

let s: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  s = await startServices();
});
afterAll(async () => s.cleanup());

describe('server-mode SQL user (parsed only: no ClickHouse server on this machine)', () => {
  it('parses every statement with the engine parser', async () => {
    expect(statements.length).toBeGreaterThanOrEqual(8);
    for (const q of statements) {
      const [row] = await s.wh.query<{ f: string }>('SELECT formatQuerySingleLine({q:String}) AS f', { params: { q } });
      expect(row?.f.length, q).toBeGreaterThan(0);
    }
  });

  it('grants SELECT on exactly the published tables, and hides inactive protocols on each', () => {
    const granted = [...file.matchAll(/^GRANT SELECT ON default\.(\w+) TO txa_sql;$/gm)].map((m) => m[1]);
    expect(granted.sort()).toEqual([...PUBLISHED_TABLES].sort());
    const policy = /CREATE ROW POLICY[\s\S]*?ON ([^\n]+)\n/.exec(file)?.[1] ?? '';
    for (const t of PUBLISHED_TABLES) expect(policy).toContain(`default.${t}`);
  });

  it("holds the service's own limits as constraints", () => {
    expect(file).toMatch(/max_execution_time = 30 MAX 30/);
    expect(file).toContain(`max_result_rows = ${SQL_MAX_LIMIT} MAX ${SQL_MAX_LIMIT}`);
    expect(file).toContain(`max_result_bytes = ${SQL_MAX_RESPONSE_BYTES} MAX ${SQL_MAX_RESPONSE_BYTES}`);
    expect(file).toContain(`max_rows_to_read = ${PLAN_QUERY_BUDGET.free} MAX ${PLAN_QUERY_BUDGET.enterprise}`);
    expect(file).toMatch(/readonly = 2 CONST/);
  });

  it('is used only with a server, and then the service sends no readonly of its own', async () => {
    expect(() => loadConfig({ CLICKHOUSE_SQL_USER: 'txa_sql' })).toThrow(/CLICKHOUSE_SQL_USER needs CLICKHOUSE_URL/);
    const config = loadConfig({ CLICKHOUSE_URL: 'http://127.0.0.1:1', CLICKHOUSE_SQL_USER: 'txa_sql', CLICKHOUSE_SQL_PASSWORD: 'x' });
    expect(config.sql.user).toBe('txa_sql');
    const withUser = new SqlSandbox([s.wh], { ...config.sql, readonlyByUser: true }, async () => ['jupiter_v6']);
    const without = new SqlSandbox([s.wh], { ...config.sql, readonlyByUser: false }, async () => ['jupiter_v6']);
    expect(await withUser.settings('free', {}, {})).not.toHaveProperty('readonly');
    expect(await without.settings('free', {}, {})).toMatchObject({ readonly: 1, max_rows_to_read: PLAN_QUERY_BUDGET.free });
  });
});
