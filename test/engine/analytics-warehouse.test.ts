// Every read of the analytics layer carries the engine's time limit: a read the engine cuts
// becomes the catalog's query time-out with a message a client can act on (JSON-RPC
// -32000, REST 408), never an internal error, and the serving session is free again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsWarehouse } from '../../api/analytics/analytics-warehouse.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { startApp } from '../support/services.ts';
import { RpcClient } from '../support/rpc-client.ts';

let t: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  t = await startApp({ ANALYTICS_TIMEOUT_SECONDS: '1' });
});
afterAll(async () => t.cleanup());

describe('analytics reads are time-bounded', () => {
  it('a read past the limit is cancelled by the engine and answered as a query time-out', async () => {
    const wh = new AnalyticsWarehouse(t.services.wh, 1);
    // Internal SQL (a numbers() table function the guard would never let a client write).
    const slow = wh.query('SELECT sum(cityHash64(number)) AS s FROM numbers(100000000000)');
    await expect(slow).rejects.toBeInstanceOf(AppError);
    await expect(slow).rejects.toMatchObject({ kind: Errors.queryTimeout, message: expect.stringMatching(/longer than 1 s/) });
    // The session answers at once afterwards: the engine stopped the read.
    expect(await wh.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('ordinary answers are unchanged under the limit', async () => {
    const rpc = await RpcClient.create(t.app);
    expect(await rpc.call('getProtocols', [])).toEqual(expect.arrayContaining(['jupiter_v6']));
    expect(await rpc.call('getProtocolStats', [{ protocolName: 'jupiter_v6' }])).toMatchObject({ protocolName: 'jupiter_v6', totalTransactions: 0 });
  });
});
