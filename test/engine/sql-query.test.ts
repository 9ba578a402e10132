// The SQL interface's answers: JSON {data, count, query} with the injected LIMIT echoed,
// streamed RFC 4180 CSV, the row cap, the engine-enforced time-out (408), and records of
// inactive protocols hidden exactly as in the other interfaces.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Budget } from '../../core/budget.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let active: string[];

beforeAll(async () => {
  // A 1 s time-out so the slow-query test is quick; everything else finishes far sooner.
  // Two sandbox sessions: one test reads a CSV stream (which holds its session) while asking more.
  t = await startApp({ SQL_TIMEOUT_SECONDS: '1', SQL_SESSIONS: '2' });
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, 3000);
  active = await t.services.registry.activeNames();
});
afterAll(async () => t.cleanup());

const post = (body: unknown, url = '/v1/query') =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

interface JsonAnswer {
  data: Record<string, unknown>[];
  count: number;
  query: string;
}

describe('JSON answers', () => {
  it('injects LIMIT 1000 when the outer query has none and echoes the executed text', async () => {
    const res = await post({ query: 'SELECT signature FROM transactions ORDER BY signature' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as JsonAnswer;
    expect(body.query).toBe('SELECT signature FROM transactions ORDER BY signature LIMIT 1000');
    expect(body.count).toBe(1000);
    expect(body.data).toHaveLength(1000);
  });

  it('keeps a LIMIT the client wrote, and does not count a subquery LIMIT or LIMIT BY as the outer one', async () => {
    const own = (await post({ query: 'SELECT fee FROM transactions LIMIT 7' })).json() as JsonAnswer;
    expect(own.query).toBe('SELECT fee FROM transactions LIMIT 7');
    expect(own.count).toBe(7);
    const inner = (await post({ query: 'SELECT count() AS n FROM (SELECT fee FROM transactions LIMIT 5)' })).json() as JsonAnswer;
    expect(inner.query).toBe('SELECT count() AS n FROM (SELECT fee FROM transactions LIMIT 5) LIMIT 1000');
    const by = (await post({ query: 'SELECT protocol_name, fee FROM transactions LIMIT 1 BY protocol_name' })).json() as JsonAnswer;
    expect(by.query.endsWith('LIMIT 1 BY protocol_name LIMIT 1000')).toBe(true);
    const max = await post({ query: 'SELECT fee FROM transactions LIMIT 10000' });
    expect(max.statusCode).toBe(200);
  });

  it('wraps a UNION, so the injected LIMIT caps the whole result rather than its last branch', async () => {
    const body = (await post({ query: 'SELECT fee FROM transactions UNION ALL SELECT fee FROM transactions' })).json() as JsonAnswer;
    expect(body.query).toBe('SELECT * FROM (\nSELECT fee FROM transactions UNION ALL SELECT fee FROM transactions\n) LIMIT 1000');
    expect(body.count).toBe(1000);
  });

  it('puts the injected LIMIT on its own line after a trailing line comment', async () => {
    const body = (await post({ query: 'SELECT 1 AS one -- note' })).json() as JsonAnswer;
    expect(body.query).toBe('SELECT 1 AS one -- note\nLIMIT 1000');
    expect(body.data).toEqual([{ one: 1 }]);
  });

  it('keys rows by column name or alias; 64-bit numbers arrive as strings', async () => {
    const body = (await post({ query: 'SELECT sum(fee) AS total, count() AS n, toUInt8(1) AS small FROM transactions' })).json() as JsonAnswer;
    expect(Object.keys(body.data[0] ?? {})).toEqual(['total', 'n', 'small']);
    expect(typeof body.data[0]?.total).toBe('string');
    expect(body.data[0]?.small).toBe(1);
  });

  it('answers the same on /v1/query and /api/v1/query', async () => {
    const q = { query: 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name' };
    expect((await post(q, '/api/v1/query')).json()).toEqual((await post(q)).json());
  });

  it('hides records of inactive protocols, in the base table and in the hourly tables', async () => {
    const [all] = await t.services.wh.query<{ n: string; visible: string }>(
      'SELECT count() AS n, countIf(protocol_name IN {a:Array(String)}) AS visible FROM transactions',
      { params: { a: active } },
    );
    expect(Number(all?.n)).toBeGreaterThan(Number(all?.visible)); // the fixture does hold hidden records
    const viaSql = (await post({ query: 'SELECT count() AS n FROM transactions' })).json() as JsonAnswer;
    expect(Number(viaSql.data[0]?.n)).toBe(Number(all?.visible));
    const names = (await post({ query: 'SELECT DISTINCT protocol_name AS p FROM protocol_hourly ORDER BY p' })).json() as JsonAnswer;
    expect(names.data.map((r) => r.p).every((p) => active.includes(String(p)))).toBe(true);
    const sub = (
      await post({
        query: 'SELECT count() AS n FROM (SELECT * FROM instruction_hourly WHERE protocol_name NOT IN (SELECT protocol_name FROM protocol_hourly))',
      })
    ).json() as JsonAnswer;
    expect(Number(sub.data[0]?.n)).toBe(0);
  });

  it('refuses a result over 10000 rows that no LIMIT bounded', async () => {
    // Each branch is capped, the union of four is not: the engine's row cap stops it.
    const branch = 'SELECT signature FROM transactions LIMIT 3000';
    const res = await post({
      query: `SELECT * FROM (${branch}) UNION ALL SELECT * FROM (${branch}) UNION ALL SELECT * FROM (${branch}) UNION ALL SELECT * FROM (${branch}) UNION ALL SELECT signature FROM transactions LIMIT 10`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'Invalid query', message: expect.stringMatching(/more than 10000 rows/) });
  });

  it('reports engine errors (unknown column) as 400 without echoing internal settings', async () => {
    const res = await post({ query: 'SELECT no_such_column FROM transactions' });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { error: string; message: string };
    expect(body.error).toBe('Invalid query');
    expect(body.message).toMatch(/no_such_column/);
    expect(body.message).not.toMatch(/additional_table_filters|readonly/);
  });

  it('answers an engine error about a huge value in a short message (the value is not echoed whole)', async () => {
    // The 2026-11 review: 20 of these made a 20 MB error body (40 passed the answer budget).
    const res = await post({ query: `SELECT parseDateTimeBestEffort(concat(${Array.from({ length: 5 }, () => "repeat('1', 1000000)").join(', ')}))` });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { error: string; message: string };
    expect(body.error).toBe('Invalid query');
    expect(body.message).toMatch(/^Cannot parse string '1111/);
    expect(body.message.length).toBeLessThanOrEqual(1_000);
    expect(res.body.length).toBeLessThan(2_000);
  });

  it('refuses a body that is not an object and an unknown format', async () => {
    const notObject = await t.app.inject({
      method: 'POST',
      url: '/v1/query',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '"SELECT 1"',
    });
    expect(notObject.statusCode).toBe(400);
    expect((notObject.json() as { error: string }).error).toBe('Invalid query');
    const fmt = await post({ query: 'SELECT 1', format: 'xml' });
    expect(fmt.statusCode).toBe(400);
    expect(fmt.json()).toEqual({ error: 'Invalid query', message: 'format must be "json" or "csv"' });
  });
});

describe('CSV answers', () => {
  it('streams a header row and RFC 4180 quoting of commas, quotes and newlines', async () => {
    const res = await post({ query: "SELECT 'a,b' AS comma, 'say \"hi\"' AS quote, 'line1\nline2' AS newline, 42 AS n, NULL AS nothing", format: 'csv' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe('"comma","quote","newline","n","nothing"\r\n"a,b","say ""hi""","line1\nline2",42,\r\n');
  });

  it('keeps a multi-line value inside quotes, as its JSON answer has it; the documented query puts each record on one line', async () => {
    // An answer carries the values as they are (RFC 4180); export files escape them (docs/rest-and-sql.md says why).
    const plain = 'SELECT signature, log_messages FROM transactions WHERE NOT success ORDER BY signature LIMIT 100';
    const json = (await post({ query: plain })).json() as JsonAnswer;
    expect(json.data.filter((r) => String(r.log_messages).includes('\n')).length).toBeGreaterThan(10);
    const csv = (await post({ query: plain, format: 'csv' })).body;
    expect(csv).toContain(`"${String(json.data[0]!.log_messages).replaceAll('"', '""')}"`);
    // The recipe of docs/rest-and-sql.md, run as written: one line a record, and the rule undoes exactly.
    const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'rest-and-sql.md'), 'utf8');
    const recipe = /```sql\n([^`]*replaceAll[^`]*)```/.exec(doc)![1]!.replace(/\s+/g, ' ').trim();
    const escaped = (await post({ query: recipe, format: 'csv' })).body;
    expect(csv.replaceAll('\r\n', '')).toContain('\n');
    expect(escaped.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    const lines = escaped.split('\r\n');
    expect(lines).toHaveLength(json.count + 2);
    const decode = (v: string): string => v.replace(/\\([\\nr])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : '\\'));
    const values = lines.slice(1, -1).map((l) => decode(l.slice(l.indexOf(',') + 2, -1).replaceAll('""', '"')));
    expect(values).toEqual(json.data.map((r) => r.log_messages));
  });

  it('returns the same rows as JSON, capped by the injected LIMIT', async () => {
    const q = 'SELECT signature, fee FROM transactions ORDER BY signature';
    const csv = await post({ query: q, format: 'csv' });
    const lines = csv.body.split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toBe('"signature","fee"');
    expect(lines).toHaveLength(1001);
    const json = (await post({ query: q })).json() as JsonAnswer;
    expect(lines[1]).toBe(`"${String(json.data[0]?.signature)}",${String(json.data[0]?.fee)}`);
  });

  it('frees the engine stream when the consumer gives up before reading (next CSV still streams)', async () => {
    const abandoned = await t.services.sqlSandbox.csv({ key: 'test', plan: 'free', budget: new Budget('free', 'sql') }, 'SELECT signature FROM transactions');
    await abandoned.body[Symbol.asyncIterator]().return?.();
    const next = await Promise.race([
      post({ query: 'SELECT 1 AS one', format: 'csv' }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('CSV stream slot still taken')), 5000)),
    ]);
    expect(next.body).toBe('"one"\r\n1\r\n');
  });

  it('accepts the format name in any case', async () => {
    const res = await post({ query: 'SELECT 1 AS one', format: 'CSV' });
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(((await post({ query: 'SELECT 1 AS one', format: 'JSON' })).json() as JsonAnswer).data).toEqual([{ one: 1 }]);
  });

  it('keeps streaming while other queries run on the engine meanwhile', async () => {
    // Queries fall between the stream's reads; on one shared engine session they would end
    // the stream (even its final "done" read fails with "No active streaming query").
    const { body } = await t.services.sqlSandbox.csv(
      { key: 'test', plan: 'free', budget: new Budget('free', 'sql') },
      'SELECT * EXCEPT (log_messages, raw_data, error_message) FROM transactions LIMIT 3000',
    );
    const it = body[Symbol.asyncIterator]();
    let text = '';
    let chunks = 0;
    for (;;) {
      const next = await it.next();
      if (next.done) break;
      chunks += 1;
      text += Buffer.from(next.value).toString('utf8');
      await t.services.wh.query('SELECT count() FROM transactions');
      await post({ query: 'SELECT 1 AS one' });
    }
    expect(chunks).toBeGreaterThanOrEqual(1);
    const [visible] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)}', {
      params: { a: active },
    });
    expect(text.split('\r\n').filter((l) => l !== '')).toHaveLength(Math.min(3000, Number(visible?.n)) + 1);
  });

  it('answers errors found before the first row as JSON errors', async () => {
    const res = await post({ query: 'SELECT no_such_column FROM transactions', format: 'csv' });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { error: string }).error).toBe('Invalid query');
  });
});

describe('time-out', () => {
  it('cancels a query running past SQL_TIMEOUT_SECONDS in the engine and answers 408', async () => {
    // A self join without a condition and 200 hashes per pair: ~2e9 hashes, far beyond one
    // second, yet within the plan's cost budget (a triple join would be refused before running).
    const slow = 'SELECT count() AS n FROM transactions AS a, transactions AS b WHERE arraySum(arrayMap(x -> cityHash64(x, a.fee, b.fee) % 2, range(200))) = 7';
    const res = await post({ query: slow });
    expect(res.statusCode).toBe(408);
    expect(res.json()).toEqual({ error: 'Query Timeout', message: expect.stringMatching(/1 s time-out and was cancelled/) });
    // The engine stopped it (not merely abandoned): its session is free, and the next query
    // on it is answered (a query still running would hold it up).
    expect(t.services.sqlSandbox.stats()).toEqual({ running: 0, waiting: 0 });
    expect((await post({ query: 'SELECT 1 AS one' })).statusCode).toBe(200);
    const csv = await post({ query: slow, format: 'csv' });
    expect(csv.statusCode).toBe(408);
  });
});
