import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { warehouseContract } from '../support/warehouse-contract.ts';

warehouseContract('embedded (chDB)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-wh-'));
  const wh = new EmbeddedWarehouse(dir);
  return {
    wh,
    close: async () => {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// chDB hands what a failed statement wrote to the session's next statement, as the start of
// its answer: under load, an abandoned listing timed out and a usage query read its rows
// (test/batch-doors.test.ts, "an abandoned MCP batch", ~3 runs in 10).
describe("embedded (chDB): each answer is its own statement's", () => {
  let dir: string;
  let wh: EmbeddedWarehouse;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'txa-wh-'));
    wh = new EmbeddedWarehouse(dir);
  });
  afterAll(async () => {
    await wh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('after statements that failed while writing rows, alone or alongside', async () => {
    const failing = () =>
      wh.query('SELECT number AS n, {t:String} AS tag FROM numbers(200000)', {
        params: { t: 'failed' },
        settings: { max_result_rows: 10, result_overflow_mode: 'throw' },
      });
    const answers: string[] = [];
    for (let i = 0; i < 20; i++) {
      const failed = failing().then(
        () => 'answered',
        () => 'failed',
      );
      const mine = wh.queryText('SELECT {k:String} AS k', 'TSV', { params: { k: `mine-${i}` } });
      const after = await Promise.all([failed, mine]);
      answers.push(after[1]);
      expect(after[0]).toBe('failed');
      answers.push(await wh.queryText('SELECT {k:String} AS k', 'TSV', { params: { k: `next-${i}` } }));
    }
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => [`mine-${i}\n`, `next-${i}\n`]).flat());
  });
});
