// SQL executions (issue 26): POST /v1/query/executions starts a client query in the
// background and answers an id at once; polling its state spends a window of its own, not the
// plan's requests (test/engine/execution-polls.test.ts); its results are paged
// (at most 10,000 rows a page, JSON or CSV, the total known), equal to a direct engine read;
// it can be cancelled; its results expire and belong to the key that started it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_PAGE_MAX_ROWS, EXECUTION_RESULT_TTL_HOURS } from '../../core/limits/sql.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let other: Record<string, string>;
let active: string[];
let clock = Date.now();
/** The rate windows' clock: moved a minute on when a poll meets the poll window (not what this file tests). */
let rateClock = Date.now();

beforeAll(async () => {
  t = await startApp({}, { exportClock: () => clock, now: () => rateClock });
  headers = await apiKeyHeaders(t.app, 'enterprise');
  other = await apiKeyHeaders(t.app, 'x402');
  await ingestDemo(t.services, 6000);
  active = await t.services.registry.activeNames();
});
afterAll(async () => t?.cleanup());

const start = (query: string, format?: string, h = headers) =>
  t.app.inject({ method: 'POST', url: '/v1/query/executions', headers: h, payload: { query, ...(format === undefined ? {} : { format }) } });
const state = (id: string, h = headers) => t.app.inject({ method: 'GET', url: `/v1/query/executions/${id}`, headers: h });
const results = (id: string, query = '', h = headers) => t.app.inject({ method: 'GET', url: `/v1/query/executions/${id}/results${query}`, headers: h });

async function finished(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    const res = await state(id);
    if (res.statusCode === 429) {
      rateClock += 60_000;
      continue;
    }
    const s = res.json();
    if (!['QUEUED', 'RUNNING'].includes(s.state)) return s;
    // Polls are limited per key: back off from 50 ms to half a second.
    await new Promise((r) => setTimeout(r, Math.min(500, 50 * 2 ** Math.min(i, 4))));
  }
  throw new Error('the execution did not finish');
}

// Four rows per record: more than one page of results from a few thousand records.
const COLUMNS = 'signature, instruction_index, slot, block_time, date, protocol_name, fee, success, k';
const QUERY = `SELECT signature, instruction_index, slot, block_time, date, protocol_name, fee, success, arrayJoin([1, 2, 3, 4]) AS k
  FROM transactions ORDER BY signature, instruction_index, k`;
// The same rows read directly from the engine (the sandbox shows active protocols only).
const reference = async (format: 'JSONEachRow' | 'CSVWithNames') => {
  const sql = `SELECT ${COLUMNS} FROM (SELECT *, arrayJoin([1, 2, 3, 4]) AS k FROM transactions WHERE protocol_name IN {active:Array(String)}) ORDER BY signature, instruction_index, k`;
  return format === 'JSONEachRow' ? t.services.wh.query(sql, { params: { active } }) : t.services.wh.queryText(sql, format, { params: { active } });
};

describe("an execution's life", () => {
  it("answers an id at once, is polled without spending the plan's requests, and pages results equal to a direct read (JSON)", async () => {
    const res = await start(QUERY);
    expect(res.statusCode, res.body).toBe(202);
    const started = res.json();
    expect(started.id).toMatch(/^exp_/);
    expect(['QUEUED', 'RUNNING']).toContain(started.state);
    expect(started.columns.map((c: { name: string }) => c.name)).toEqual(COLUMNS.split(', '));

    // Polling spends its own window: the key's remaining requests do not move.
    const a = await state(started.id);
    const b = await state(started.id);
    expect(a.statusCode).toBe(200);
    expect(b.headers['x-ratelimit-remaining']).toBe(a.headers['x-ratelimit-remaining']);

    const done = await finished(started.id);
    expect(done.state).toBe('COMPLETED');
    expect(done.progress).toBe(100);
    const direct = await reference('JSONEachRow');
    expect(direct.length).toBeGreaterThan(EXECUTION_PAGE_MAX_ROWS);
    expect(done.totalRows).toBe(direct.length);
    expect(Date.parse(String(done.expiresAt)) - Date.parse(String(done.finishedAt))).toBe(EXECUTION_RESULT_TTL_HOURS * 3_600_000);

    const rows: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await results(started.id, cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`);
      expect(page.statusCode, page.body).toBe(200);
      const body = page.json();
      expect(body.count).toBeLessThanOrEqual(EXECUTION_PAGE_MAX_ROWS);
      expect(body.count).toBe(body.data.length);
      expect(body.totalRows).toBe(direct.length);
      expect(page.headers['x-execution-total-rows']).toBe(String(direct.length));
      // A page is a metered answer like any other, and reads its own rows only, not the whole
      // result (it read all of it on every page: paging cost the square of the result's size).
      const rowsRead = Number(page.headers['x-stats-rows-read']);
      expect(rowsRead).toBeGreaterThan(0);
      expect(rowsRead, `page ${pages + 1}`).toBeLessThanOrEqual(body.count);
      rows.push(...body.data);
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(Math.ceil(direct.length / EXECUTION_PAGE_MAX_ROWS));
    expect(rows).toEqual(direct);
  });

  it('pages a large result in small pages that read it once in all, not once per page', async () => {
    const id = (await start(QUERY)).json().id;
    const done = await finished(id);
    expect(done.state).toBe('COMPLETED');
    const total = Number(done.totalRows);
    // Walk to the last pages with small pages' cursors: each reads about its own rows.
    let cursor: string | null = null;
    let read = 0;
    let pages = 0;
    do {
      const page = await results(id, `?limit=5000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(page.statusCode, page.body).toBe(200);
      read += Number(page.headers['x-stats-rows-read']);
      cursor = page.json().nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(Math.ceil(total / 5000));
    // The whole walk read the result once, not once per page.
    expect(read).toBeLessThanOrEqual(total);
    // Columns are the query's: the row numbers pages are read by are not among them.
    const one = (await results(id, '?limit=1')).json();
    expect(Object.keys(one.data[0]).sort()).toEqual(COLUMNS.split(', ').sort());
  });

  it('pages CSV in the size asked, each with its header row, equal to a direct read', async () => {
    const id = (await start(QUERY, 'CSV')).json().id;
    expect((await finished(id)).state).toBe('COMPLETED');
    const direct = String(await reference('CSVWithNames'))
      .split('\n')
      .filter((l) => l !== '');
    const [header, ...body] = direct;
    const got: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await results(id, `?limit=7000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/csv/);
      const lines = page.body.split('\n').filter((l) => l !== '');
      expect(lines[0]).toBe(header);
      expect(lines.length - 1).toBeLessThanOrEqual(7000);
      got.push(...lines.slice(1));
      cursor = page.headers['x-execution-next-cursor'] as string | undefined;
    } while (cursor !== undefined);
    expect(got).toEqual(body);
  });

  it('is refused up front like /v1/query: the guard, the body, the format', async () => {
    expect((await start('DROP TABLE transactions')).statusCode).toBe(400);
    expect((await start('SELECT * FROM system.tables')).statusCode).toBe(400);
    expect((await start('')).statusCode).toBe(400);
    expect((await start('SELECT 1', 'xml')).statusCode).toBe(400);
    const extra = await t.app.inject({ method: 'POST', url: '/v1/query/executions', headers, payload: { query: 'SELECT 1', sampling: {} } });
    expect(extra.statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url: '/v1/query/executions', payload: { query: 'SELECT 1' } })).statusCode).toBe(401);
  });

  it('can be cancelled; a cancelled execution has no results', async () => {
    const id = (await start(QUERY)).json().id;
    const res = await t.app.inject({ method: 'POST', url: `/v1/query/executions/${id}/cancel`, headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().state).toBe('CANCELLED');
    expect((await finished(id)).state).toBe('CANCELLED');
    const page = await results(id);
    expect(page.statusCode).toBe(409);
    expect(page.json().message).toMatch(/CANCELLED/);
  });

  it('belongs to its key: another key, and the export listing, do not see it', async () => {
    const id = (await start('SELECT count() AS n FROM transactions')).json().id;
    await finished(id);
    expect((await state(id, other)).statusCode).toBe(404);
    expect((await results(id, '', other)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: `/v1/query/executions/${id}/cancel`, headers: other })).statusCode).toBe(404);
    expect((await state(id)).json().state).toBe('COMPLETED');
    const listing = (await t.app.inject({ method: 'GET', url: '/v1/query/exports', headers })).json();
    expect(listing.jobs.map((j: { id: string }) => j.id)).not.toContain(id);
    // An export job's id is not an execution's.
    const exp = await t.app.inject({
      method: 'POST',
      url: '/v1/query/exports',
      headers,
      payload: { query: 'SELECT signature FROM transactions LIMIT 5', format: 'CSV' },
    });
    expect(exp.statusCode, exp.body).toBe(202);
    expect((await state(exp.json().id)).statusCode).toBe(404);
  });

  it('expires: 24 h after it finished its results are gone (EXPIRED, 404)', async () => {
    const id = (await start('SELECT signature FROM transactions ORDER BY signature LIMIT 10')).json().id;
    await finished(id);
    expect((await results(id)).json().count).toBe(10);
    const saved = clock;
    try {
      clock += EXECUTION_RESULT_TTL_HOURS * 3_600_000 + 1000;
      const s = (await state(id)).json();
      expect(s.state).toBe('EXPIRED');
      const page = await results(id);
      expect(page.statusCode).toBe(404);
      expect(page.json().message).toMatch(/expired/);
    } finally {
      clock = saved;
    }
  });
});

describe('hostile ids, cursors and limits: a clear 4xx, never a 5xx', () => {
  it('answers ids of every shape with 404 (or 414 past the path limit)', async () => {
    const ids = [
      'x',
      'exp_',
      'exp_AAAAAAAAAAAAAAAA',
      '..%2F..%2Fetc%2Fpasswd',
      '%00',
      'exp_AAAAAAAAAAAAAAA%27',
      encodeURIComponent('exp_" OR 1=1 --'),
      'a'.repeat(600),
    ];
    for (const id of ids) {
      for (const url of [`/v1/query/executions/${id}`, `/v1/query/executions/${id}/results`]) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, `${url}: ${res.body}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, url).toBeLessThan(500);
      }
    }
  });

  it('refuses cursors it did not issue for this execution, and limits out of range', async () => {
    const id = (await start('SELECT signature FROM transactions ORDER BY signature LIMIT 30')).json().id;
    const otherId = (await start('SELECT signature FROM transactions ORDER BY signature LIMIT 30')).json().id;
    await finished(id);
    await finished(otherId);
    const first = (await results(otherId, '?limit=10')).json();
    const foreign = first.nextCursor as string;
    expect((await results(otherId, `?limit=10&cursor=${encodeURIComponent(foreign)}`)).statusCode).toBe(200);
    const forged = Buffer.from(JSON.stringify(['execution', 5, 'x', 'y'])).toString('base64url');
    const tampered = `${foreign.slice(0, -2)}AA`;
    for (const cursor of [foreign, forged, tampered, 'garbage', '', 'A'.repeat(5000), '%00', encodeURIComponent('[]')]) {
      const res = await results(id, `?cursor=${cursor}`);
      expect(res.statusCode, `${cursor.slice(0, 40)}: ${res.body}`).toBe(400);
    }
    for (const limit of ['0', '-1', '10001', '1e3', 'abc', '1.5', '']) {
      const res = await results(id, `?limit=${limit}`);
      expect(res.statusCode, `limit=${limit}: ${res.body}`).toBe(400);
    }
  });
});
