// REST /api/v1/stats (global statistics from the views and system.parts; the figures are
// checked against the oracle in analytics.test.ts), the OpenAPI
// document generated from the route schemas, and the interactive docs page.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toGlobalStats, type GlobalStats } from '../../api/analytics/presets/global-stats.ts';
import type { QueryOptions } from '../../warehouse/warehouse.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;
let active: string[];

beforeAll(async () => {
  ({ t, headers, active } = await startAppWithData(3000));
});
afterAll(async () => t.cleanup());

async function get(url: string, status = 200) {
  const res = await t.app.inject({ method: 'GET', url, headers });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(status);
  return res;
}

describe('GET /api/v1/stats', () => {
  it('equals the analytics answer (figures checked in analytics.test.ts), in the success envelope', async () => {
    const body = (await get('/api/v1/stats')).json() as { success: boolean; data: GlobalStats; meta: { count: number } };
    expect(body.success).toBe(true);
    // Storage sizes move as the engine merges parts: compare the figures, then the table list.
    const { storage, ...figures } = body.data;
    const { storage: want, ...wantFigures } = await t.services.operatorAnalytics.globalStats();
    expect(figures).toEqual(JSON.parse(JSON.stringify(wantFigures)));
    expect(storage.tables.map((x) => x.table)).toEqual(want.tables.map((x) => x.table));
    expect(figures.totalTransactions).toBeGreaterThan(0);
    expect(figures.protocols.map((p) => p.protocolName)).toEqual(active);
  });

  it('reports storage of the published tables only, without row counts', async () => {
    const { data } = (await get('/api/v1/stats')).json() as { data: GlobalStats };
    const tx = data.storage.tables.find((x) => x.table === 'transactions');
    expect(tx!.bytesOnDisk).toBeGreaterThan(0);
    expect(data.storage.bytesOnDisk).toBe(data.storage.tables.reduce((s, x) => s + x.bytesOnDisk, 0));
    // Internal tables (keys, dead letters, lookups) are not described to a client, and no
    // row count sits beside the visible total to reveal records of hidden protocols.
    expect(data.storage.tables.map((x) => x.table).sort()).toEqual(['instruction_hourly', 'protocol_hourly', 'transactions']);
    for (const x of data.storage.tables) expect(x).not.toHaveProperty('rows');
  });

  it('does not scan the base table (answers from the view and system.parts)', async () => {
    t.services.analytics.invalidate();
    const seen: string[] = [];
    const wh = t.services.wh;
    const original = wh.query.bind(wh);
    vi.spyOn(wh, 'query').mockImplementation(((sql: string, options?: QueryOptions) => {
      seen.push(sql);
      return original(sql, options);
    }) as typeof wh.query);
    try {
      await get('/api/v1/stats');
    } finally {
      vi.restoreAllMocks();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((q) => /\bFROM protocol_hourly\b/.test(q))).toBe(true);
    expect(seen.some((q) => /system\.parts/.test(q))).toBe(true);
    expect(seen.filter((q) => /\bFROM transactions\b/.test(q))).toEqual([]);
  });

  it('answers zeros on an empty store', () => {
    expect(toGlobalStats(['pump_fun'], [], [])).toMatchObject({
      totalTransactions: 0,
      successRate: 0,
      averageFee: 0,
      firstSeen: 0,
      lastSeen: 0,
      latestSlot: '0',
      protocols: [{ protocolName: 'pump_fun', totalTransactions: 0 }],
      storage: { bytesOnDisk: 0, tables: [] },
    });
  });
});

describe('OpenAPI document and docs page', () => {
  it('serves an OpenAPI 3 document generated from the route schemas', async () => {
    const doc = (await get('/api/v1/openapi.json')).json() as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[]; responses: Record<string, unknown> }>
      >;
    };
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of [
      '/api/v1/transactions',
      '/api/v1/transactions/{signature}',
      '/api/v1/analytics/protocols',
      '/api/v1/analytics/time-series',
      '/api/v1/analytics/fees',
      '/api/v1/stats',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    expect(doc.paths['/v1/query']?.post).toBeDefined();
    expect(doc.paths['/api/v1/query']?.post).toBeDefined();
    const limit = doc.paths['/api/v1/transactions']!.get!.parameters!.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });
    const required = doc.paths['/api/v1/analytics/time-series']!.get!.parameters!.filter((p) => p.required)
      .map((p) => p.name)
      .sort();
    expect(required).toEqual(['date_from', 'date_to']);
    expect(Object.keys(doc.paths['/api/v1/transactions/{signature}']!.get!.responses)).toEqual(expect.arrayContaining(['200', '404']));
    expect(doc.components.schemas.ErrorBody).toMatchObject({ required: ['error', 'message'] });
    // Operator routes are not part of the public document.
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin'))).toBe(false);
  });

  it('names its server (generated clients take their base URL from it)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { host: 'api.example.test:8080' } });
    expect((res.json() as { servers: { url: string }[] }).servers).toEqual([expect.objectContaining({ url: 'http://api.example.test:8080' })]);
  });

  it('states what the server checks: active protocol names as the enum, real calendar days, every status and its headers', async () => {
    type Op = {
      parameters?: { name: string; schema: Record<string, unknown> }[];
      responses: Record<string, { headers?: Record<string, { required?: boolean }> }>;
      security?: unknown[];
      requestBody?: unknown;
    };
    const doc = (await get('/api/v1/openapi.json')).json() as {
      paths: Record<string, Record<string, Op>>;
      components: { responses: Record<string, { headers: Record<string, { required?: boolean }> }>; schemas: Record<string, Record<string, unknown>> };
    };
    // A named enum is stated once under components/schemas and referenced (ProtocolName).
    const resolved = (schema: Record<string, unknown>) =>
      typeof schema.$ref === 'string' ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
    const param = (path: string, name: string) => resolved(doc.paths[path]!.get!.parameters!.find((p) => p.name === name)!.schema);
    const active = (await get('/api/v1/stats')).json<{ data: { protocols: { protocolName: string }[] } }>().data.protocols.map((p) => p.protocolName);
    // The listing's filter too: an unknown or inactive name is refused there as well.
    for (const path of ['/api/v1/analytics/protocols', '/api/v1/analytics/time-series', '/api/v1/analytics/fees', '/api/v1/transactions']) {
      expect([...(param(path, 'protocol_name').enum as string[])].sort(), path).toEqual([...active].sort());
    }
    const day = new RegExp(param('/api/v1/transactions', 'date_from').pattern as string, 'u');
    expect(param('/api/v1/transactions', 'date_from').format).toBe('date');
    for (const ok of ['1970-01-01', '2024-02-29', '2106-02-07']) expect(day.test(ok), ok).toBe(true);
    for (const bad of ['4157-52-69', '2025-02-30', '2100-02-29', '1969-12-31', '2106-02-08', '2025-1-1']) expect(day.test(bad), bad).toBe(false);
    expect(doc.components.responses.MethodNotAllowed!.headers.Allow).toMatchObject({ required: true });
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '414', '415', '429']));
        if (op.security === undefined || op.security.length > 0) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['401', '403']));
        if (op.requestBody !== undefined) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['413', '415']));
        expect(op.responses['429']!.headers!['Retry-After'], `${method} ${path}`).toMatchObject({ required: true });
      }
    }
  });

  it('serves the description without an API key, while data needs one', async () => {
    for (const url of ['/api/v1/openapi.json', '/api/v1/docs', '/api/v1/docs/static/swagger-ui.css']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    for (const [method, url] of [
      ['GET', '/api/v1/stats'],
      ['GET', '/api/v1/transactions'],
      ['POST', '/v1/query'],
      ['POST', '/api/v1/query'],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: { query: 'SELECT 1' } } : {}) });
      expect(res.statusCode, url).toBe(401);
      expect((res.json() as { error: string }).error).toBe('Unauthorized');
    }
  });

  it('serves the interactive docs page', async () => {
    const res = await get('/api/v1/docs');
    expect(String(res.headers['content-type'])).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
  });
});
