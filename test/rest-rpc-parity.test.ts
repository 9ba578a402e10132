// REST answers equal their JSON-RPC equivalents over HTTP on the same data: the REST day
// range [date_from 00:00:00, date_to 23:59:59] is the JSON-RPC blockTime range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from './support/api-key.ts';
import { demoRecords, FIXTURE_START, ingestRecords } from './support/fixtures.ts';
import { startApp } from './support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  const report = await ingestRecords(t.services, await demoRecords(t.services, 3000));
  expect(report.rejected).toEqual([]);
});
afterAll(async () => t.cleanup());

async function rest(url: string): Promise<unknown> {
  const res = await t.app.inject({ method: 'GET', url, headers });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return (res.json() as { data: unknown }).data;
}

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method, params } });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { result?: unknown; error?: unknown };
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  return body.result;
}

const from = FIXTURE_START + 86_400; // 2024-12-30
const to = FIXTURE_START + 3 * 86_400 - 1; // 2024-12-31 23:59:59

describe('REST equals JSON-RPC', () => {
  it('/analytics/protocols = getProtocolStats', async () => {
    for (const p of ['jupiter_v6', 'pump_fun', 'whirlpool']) {
      expect(await rest(`/api/v1/analytics/protocols?protocol_name=${p}&date_from=2024-12-30&date_to=2024-12-31`))
        .toEqual(await rpc('getProtocolStats', [{ protocolName: p, blockTime: { gte: from, lte: to } }]));
    }
  });

  it('/analytics/time-series = getProtocolActivity (hour and day)', async () => {
    expect(await rest('/api/v1/analytics/time-series?protocol_name=pump_fun&date_from=2024-12-30&date_to=2024-12-31'))
      .toEqual(await rpc('getProtocolActivity', [{ protocolName: 'pump_fun', blockTime: { gte: from, lte: to }, interval: 'hour' }]));
    expect(await rest('/api/v1/analytics/time-series?date_from=2024-12-30&date_to=2024-12-31&granularity=day'))
      .toEqual(await rpc('getProtocolActivity', [{ blockTime: { gte: from, lte: to }, interval: 'day' }]));
  });

  it('/transactions = getTransactions (newest first)', async () => {
    const viaRpc = (await rpc('getTransactions', [{ sortOrder: 'desc', limit: 25, filters: { protocols: ['jupiter_v6'], blockTime: { gte: from, lte: to } } }])) as { data: unknown[] };
    expect(await rest('/api/v1/transactions?protocol_name=jupiter_v6&date_from=2024-12-30&date_to=2024-12-31&limit=25')).toEqual(viaRpc.data);
  });

  it('/transactions/:signature = getTransaction', async () => {
    const [row] = await t.services.wh.query<{ signature: string }>("SELECT signature FROM transactions WHERE protocol_name = 'raydium_cp_swap' LIMIT 1");
    expect(await rest(`/api/v1/transactions/${row!.signature}`)).toEqual(await rpc('getTransaction', [row!.signature]));
  });
});
