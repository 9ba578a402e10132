// REST answers equal their JSON-RPC equivalents over HTTP on the same data: the REST day
// range [date_from 00:00:00, date_to 23:59:59] is the JSON-RPC blockTime range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayStart } from '../support/fixtures.ts';
import { transactionsWhere } from '../support/oracle.ts';
import { restGet, type Envelope } from '../support/rest-client.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;

beforeAll(async () => {
  ({ t, headers } = await startAppWithData(3000));
});
afterAll(async () => t.cleanup());

const get = restGet(
  () => t.app,
  () => headers,
);
const rest = async (url: string): Promise<unknown> => (await get<Envelope<unknown>>(url)).data;

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method, params } });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { result?: unknown; error?: unknown };
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  return body.result;
}

const from = dayStart(1); // 2024-12-30
const to = dayStart(3) - 1; // 2024-12-31 23:59:59

describe('REST equals JSON-RPC', () => {
  it('/analytics/protocols = getProtocolStats', async () => {
    for (const p of ['jupiter_v6', 'pump_fun', 'whirlpool']) {
      expect(await rest(`/api/v1/analytics/protocols?protocol_name=${p}&date_from=2024-12-30&date_to=2024-12-31`)).toEqual(
        await rpc('getProtocolStats', [{ protocolName: p, blockTime: { gte: from, lte: to } }]),
      );
    }
  });

  it('/analytics/time-series = getProtocolActivity (hour and day)', async () => {
    expect(await rest('/api/v1/analytics/time-series?protocol_name=pump_fun&date_from=2024-12-30&date_to=2024-12-31')).toEqual(
      await rpc('getProtocolActivity', [{ protocolName: 'pump_fun', blockTime: { gte: from, lte: to }, interval: 'hour' }]),
    );
    expect(await rest('/api/v1/analytics/time-series?date_from=2024-12-30&date_to=2024-12-31&granularity=day')).toEqual(
      await rpc('getProtocolActivity', [{ blockTime: { gte: from, lte: to }, interval: 'day' }]),
    );
  });

  it('/transactions = getTransactions (newest first)', async () => {
    const viaRpc = (await rpc('getTransactions', [
      { sortOrder: 'desc', limit: 25, filters: { protocols: ['jupiter_v6'], blockTime: { gte: from, lte: to } } },
    ])) as { data: unknown[] };
    expect(await rest('/api/v1/transactions?protocol_name=jupiter_v6&date_from=2024-12-30&date_to=2024-12-31&limit=25')).toEqual(viaRpc.data);
  });

  it('/transactions/:signature = getTransaction', async () => {
    const [row] = await transactionsWhere(t.services, "protocol_name = 'raydium_cp_swap'");
    expect(await rest(`/api/v1/transactions/${row!.signature}`)).toEqual(await rpc('getTransaction', [row!.signature]));
  });
});
