// The SQL interface's gate: every hostile query of the corpus is refused with
// 400 {error:"Invalid query"}, and every legitimate analytical query of the other corpus runs.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { loadFunctionPolicy } from '../../api/services/sql/function-policy.ts';
import { prepareQuery, type GuardContext } from '../../api/services/sql/sql-guard.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

interface Hostile {
  category: string;
  query: unknown;
  generate?: 'over-length' | 'huge-in-list';
  nonString?: boolean;
  /**
   * Refused when it runs (an engine error, the answer budget), or by the cost check (joins:
   * test/engine/sql-joins.test.ts asserts each one's outcome at a size where it matters), not by the guard.
   */
  stage?: 'run' | 'cost';
  outcome?: 'refused' | 'runs';
}

const hostile = JSON.parse(readFileSync(new URL('../fixtures/hostile-queries.json', import.meta.url), 'utf8')) as Hostile[];
const legit = JSON.parse(readFileSync(new URL('../fixtures/legit-queries.json', import.meta.url), 'utf8')) as string[];

/**
 * A file only a walked-around guard could read: `{SECRET_FILE}` in the corpus names it, and
 * no answer may ever carry its content.
 */
const SECRET = `SECRET-${Math.random().toString(36).slice(2)}`;
const secretFile = path.join(mkdtempSync(path.join(tmpdir(), 'txa-secret-')), 'secret.txt');
writeFileSync(secretFile, SECRET);

/** Corpus entries the file cannot hold literally (too long to read, or naming the secret file). */
function materialize(h: Hostile): unknown {
  if (typeof h.query === 'string' && h.query.includes('{SECRET_FILE}')) return h.query.replaceAll('{SECRET_FILE}', secretFile);
  if (h.generate === 'over-length') return `SELECT count() FROM transactions WHERE fee > 0 ${'AND 1 '.repeat(20_000)}`;
  if (h.generate === 'huge-in-list') {
    // 30000 values: legal SQL, but over the 100000-character limit.
    return `SELECT count() FROM transactions WHERE fee IN (${Array.from({ length: 30_000 }, (_, i) => 5000 + i).join(', ')})`;
  }
  return h.query;
}

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp({ SQL_TIMEOUT_SECONDS: '10' });
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, 2000);
});
afterAll(async () => t.cleanup());

const post = (body: unknown, url = '/v1/query') =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('hostile query corpus', () => {
  it('holds at least 365 queries covering every category, 100+ aimed at the parse-tree walker', () => {
    expect(hostile.length).toBeGreaterThanOrEqual(365);
    expect(hostile.filter((h) => h.category === 'walker').length).toBeGreaterThanOrEqual(100);
    const categories = new Set(hostile.map((h) => h.category));
    for (const c of ['statement', 'multi-statement', 'table-function', 'table', 'clause', 'function', 'limit', 'shape', 'case', 'walker']) {
      expect(categories).toContain(c);
    }
  });

  it('refuses every one with 400 {error:"Invalid query", message}', async () => {
    const wrong: string[] = [];
    for (const h of hostile.filter((x) => x.stage !== 'cost')) {
      const query = materialize(h);
      const res = await post({ query });
      const body = res.json() as { error?: string; message?: string };
      if (res.statusCode !== 400 || body.error !== 'Invalid query' || typeof body.message !== 'string' || body.message === '' || res.body.includes(SECRET)) {
        wrong.push(`${res.statusCode} ${JSON.stringify(query).slice(0, 120)} -> ${res.body.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('answers every join shape with 400 or its rows, never a 5xx (on 2000 records most fit an enterprise budget)', async () => {
    const wrong: string[] = [];
    for (const h of hostile.filter((x) => x.stage === 'cost')) {
      const res = await post({ query: h.query });
      if (res.statusCode !== 200 && !(res.statusCode === 400 && (res.json() as { error?: string }).error === 'Invalid query')) {
        wrong.push(`${res.statusCode} ${JSON.stringify(h.query).slice(0, 120)} -> ${res.body.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('names the reason in the message', async () => {
    const cases: [string, RegExp][] = [
      ['SELECT 1; DROP TABLE transactions', /one statement/],
      ['DROP TABLE transactions', /DROP statements are not allowed/],
      ["SELECT * FROM file('/etc/passwd', 'LineAsString')", /table functions are not allowed \(file\)/],
      ['SELECT * FROM system.tables', /system and information_schema/],
      ['SELECT * FROM protocols', /not published.*transactions, protocol_hourly, instruction_hourly/],
      ['SELECT 1 SETTINGS readonly = 0', /SETTINGS/],
      ['SELECT 1 FORMAT JSON', /FORMAT/],
      ["SELECT 1 INTO OUTFILE '/tmp/x'", /INTO OUTFILE/],
      ['SELECT fee FROM transactions LIMIT 10001', /maximum of 10000/],
      ['SELECT hostName()', /hostName\(\) is not allowed/],
    ];
    for (const [query, pattern] of cases) {
      const res = await post({ query });
      expect(res.statusCode, query).toBe(400);
      expect((res.json() as { message: string }).message, query).toMatch(pattern);
    }
  });

  it('answers a non-string or empty query with the message SPEC gives', async () => {
    for (const query of [undefined, null, '', '   ', 42, ['SELECT 1'], { q: 1 }]) {
      const res = await post(query === undefined ? {} : { query });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Invalid query', message: 'the query must be a non-empty string' });
    }
  });

  it('treats a request without a body as an empty query', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/query', headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid query', message: 'the query must be a non-empty string' });
  });

  it('refuses deep nesting at the parser, before a parse-tree dump that grows with the square of the depth', async () => {
    const query = `SELECT ${'('.repeat(490)}1${')'.repeat(490)}`;
    const res = await post({ query });
    expect(res.statusCode).toBe(400);
    // Stopped by the engine's parser depth limit, not after a 49 MB dump was read back.
    expect(res.json()).toEqual({ error: 'Invalid query', message: expect.stringMatching(/depth/i) });
  });

  it('names the maximum length', async () => {
    const res = await post({ query: `SELECT 1 ${' '.repeat(100_001)}` });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { message: string }).message).toMatch(/100000 characters/);
  });

  it('left every table as it was (nothing was written, dropped or altered)', async () => {
    const [row] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
    expect(Number(row?.n)).toBe(2000);
    const tables = await t.services.wh.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('t', 'leak', 'v', 't2')",
    );
    expect(tables).toEqual([]);
  });
});

describe('legitimate query corpus', () => {
  it('holds at least 60 ClickHouse queries', () => {
    expect(legit.length).toBeGreaterThanOrEqual(60);
  });

  it('runs every one (JSON and CSV)', async () => {
    const failed: string[] = [];
    for (const query of legit) {
      const res = await post({ query });
      if (res.statusCode !== 200) failed.push(`${res.statusCode} ${query.slice(0, 100)} -> ${res.body.slice(0, 300)}`);
      else {
        const body = res.json() as { data: unknown[]; count: number; query: string };
        if (!Array.isArray(body.data) || body.count !== body.data.length) failed.push(`bad body for ${query.slice(0, 100)}`);
      }
    }
    expect(failed).toEqual([]);
  });

  it('also runs every one as CSV on the REST alias', async () => {
    const failed: string[] = [];
    for (const query of legit.slice(0, 30)) {
      const res = await post({ query, format: 'csv' }, '/api/v1/query');
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/csv')) {
        failed.push(`${res.statusCode} ${query.slice(0, 100)} -> ${res.body.slice(0, 200)}`);
      }
    }
    expect(failed).toEqual([]);
  });
});

describe('the same decisions whatever the transport', () => {
  /**
   * The server transport sends `<sql>\nFORMAT <fmt>` as text (warehouse/server-warehouse.ts);
   * this wrapper frames every statement that way on the embedded engine, so the guard's
   * reading of EXPLAIN AST is checked under the server's framing too.
   */
  function serverFramed(wh: Warehouse): Warehouse {
    return {
      transport: 'server',
      // As the server answers a framed statement: JSONEachRow text, one row a line (the embedded
      // query() reads its own format, JSONEachRowWithProgress, which the framing overrides).
      query: async <T>(sql: string, o?: QueryOptions) =>
        (await wh.queryText(`${sql}\nFORMAT JSONEachRow`, 'JSONEachRow', { ...o, settings: { output_format_json_quote_64bit_integers: 1, ...o?.settings } }))
          .split('\n')
          .filter((l) => l.length > 0)
          .map((l) => JSON.parse(l) as T),
      queryText: (sql: string, format: string, o?: QueryOptions) => wh.queryText(`${sql}\nFORMAT ${format}`, format, o),
      stream: (sql, format, o) => wh.stream(`${sql}\nFORMAT ${format}`, format, o),
      insert: (table, rows, o) => wh.insert(table, rows, o),
      insertBytes: (table, data, format, o) => wh.insertBytes(table, data, format, o),
      exec: (sql, o) => wh.exec(sql, o),
      close: async () => undefined,
    };
  }

  const contextFor = (wh: Warehouse): GuardContext => {
    const policy = loadFunctionPolicy(wh);
    return {
      wh,
      realTables: async () =>
        new Set((await wh.query<{ name: string }>('SELECT name FROM system.tables WHERE database = currentDatabase()')).map((r) => r.name)),
      functions: () => policy,
    };
  };

  it('accepts every legitimate query with the same executed text, and refuses every hostile one', async () => {
    const embedded = contextFor(t.services.wh);
    const server = contextFor(serverFramed(t.services.wh));
    const differences: string[] = [];
    for (const query of legit) {
      const a = await prepareQuery(embedded, query).then(
        (p) => p.executed,
        (e: Error) => `refused: ${e.message}`,
      );
      const b = await prepareQuery(server, query).then(
        (p) => p.executed,
        (e: Error) => `refused: ${e.message}`,
      );
      if (a !== b || a.startsWith('refused')) differences.push(`${query.slice(0, 80)}: embedded ${a.slice(0, 80)} / server ${b.slice(0, 80)}`);
    }
    for (const h of hostile.filter((x) => x.stage === undefined)) {
      const refused = await prepareQuery(server, materialize(h)).then(
        () => false,
        (e: unknown) => e instanceof AppError && e.kind.title === 'Invalid query',
      );
      if (!refused) differences.push(`hostile accepted under server framing: ${JSON.stringify(h.query).slice(0, 80)}`);
    }
    expect(differences).toEqual([]);
  });
});
