import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { warehouseContract } from '../support/warehouse-contract.ts';

warehouseContract('embedded (chDB)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-wh-'));
  const wh = new EmbeddedWarehouse(dir);
  return { wh, close: async () => { await wh.close(); rmSync(dir, { recursive: true, force: true }); } };
});
