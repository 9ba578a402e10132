// The server transport (@clickhouse/client over HTTP): against a real ClickHouse server
// when CLICKHOUSE_URL is set, otherwise against the HTTP shim backed by the embedded engine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config/load-config.ts';
import { ServerWarehouse } from '../../warehouse/server-warehouse.ts';
import { startClickHouseShim } from '../support/clickhouse-http-shim.ts';
import { warehouseContract } from '../support/warehouse-contract.ts';

warehouseContract('server (@clickhouse/client over HTTP)', async () => {
  const real = loadConfig().clickhouse;
  if (real.url !== undefined) {
    const wh = new ServerWarehouse({ ...real, url: real.url });
    return { wh, close: () => wh.close() };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-shim-'));
  const shim = await startClickHouseShim(dir);
  const wh = new ServerWarehouse({ url: shim.url, user: 'default', password: '', database: 'default' });
  return {
    wh,
    close: async () => {
      await wh.close();
      await shim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
