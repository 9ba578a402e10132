// The SQL interface over the server transport (@clickhouse/client over HTTP): against the
// HTTP shim backed by the embedded engine (no ClickHouse server binary can be installed
// here), or a real server when CLICKHOUSE_URL is set. Same corpora, same answers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { startClickHouseShim, type Shim } from '../support/clickhouse-http-shim.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

const hostile = JSON.parse(readFileSync(new URL('../fixtures/hostile-queries.json', import.meta.url), 'utf8')) as {
  query: unknown;
  generate?: string;
  stage?: string;
}[];
const legit = JSON.parse(readFileSync(new URL('../fixtures/legit-queries.json', import.meta.url), 'utf8')) as string[];

let shim: Shim | undefined;
let shimDir: string | undefined;
let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  let url = process.env.CLICKHOUSE_URL;
  if (url === undefined) {
    shimDir = mkdtempSync(path.join(tmpdir(), 'txa-sql-shim-'));
    shim = await startClickHouseShim(shimDir);
    url = shim.url;
  }
  t = await startApp({ CLICKHOUSE_URL: url, SQL_TIMEOUT_SECONDS: '1' });
  expect(t.services.wh.transport).toBe('server');
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, 2000);
});
afterAll(async () => {
  await t?.cleanup();
  await shim?.close();
  if (shimDir) rmSync(shimDir, { recursive: true, force: true });
});

const post = (body: unknown) =>
  t.app.inject({ method: 'POST', url: '/v1/query', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('SQL over the server transport', () => {
  it('runs every legitimate query', async () => {
    const failed: string[] = [];
    for (const query of legit) {
      const res = await post({ query });
      if (res.statusCode !== 200) failed.push(`${res.statusCode} ${query.slice(0, 100)} -> ${res.body.slice(0, 200)}`);
    }
    expect(failed).toEqual([]);
  });

  it('refuses every hostile query with 400 Invalid query', async () => {
    const wrong: string[] = [];
    // Joins refused by their cost (stage "cost") are checked at a size where they matter: test/engine/sql-joins.test.ts.
    for (const h of hostile.filter((x) => x.generate === undefined && x.stage !== 'cost')) {
      const res = await post({ query: h.query });
      if (res.statusCode !== 400 || (res.json() as { error?: string }).error !== 'Invalid query') {
        wrong.push(`${res.statusCode} ${JSON.stringify(h.query).slice(0, 100)} -> ${res.body.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('echoes the injected LIMIT, quotes 64-bit integers and streams CSV', async () => {
    const json = (await post({ query: 'SELECT count() AS n FROM transactions' })).json() as { data: { n: unknown }[]; query: string };
    expect(json.query).toBe('SELECT count() AS n FROM transactions LIMIT 1000');
    expect(typeof json.data[0]?.n).toBe('string');
    const csv = await post({ query: "SELECT 'a,b' AS x, 'say \"hi\"' AS y, 'l1\nl2' AS z", format: 'csv' });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.body).toBe('"x","y","z"\r\n"a,b","say ""hi""","l1\nl2"\r\n');
  });

  it('answers 408 when the engine cancels a slow query', async () => {
    const res = await post({ query: 'SELECT count() AS n FROM transactions AS a, transactions AS b, transactions AS c WHERE a.fee + b.fee + c.fee = 7' });
    expect(res.statusCode).toBe(408);
    expect((res.json() as { error: string }).error).toBe('Query Timeout');
  });
});
