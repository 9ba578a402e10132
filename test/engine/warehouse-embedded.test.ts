import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { warehouseContract } from '../support/warehouse-contract.ts';
import { SERVING_SESSIONS } from '../../core/limits/warehouse.ts';

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
// On one session (the drain after a failure) and on a pool of serving sessions.
describe.each([1, SERVING_SESSIONS])("embedded (chDB), %i serving session(s): each answer is its own statement's", (sessions) => {
  let dir: string;
  let wh: EmbeddedWarehouse;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'txa-wh-'));
    wh = new EmbeddedWarehouse(dir, { sessions });
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

// A statement used to wait for every statement sent before it on the serving session: a
// listing of seconds held a quick getProtocolStats behind it. The serving sessions are a pool.
describe('embedded (chDB): a quick statement does not wait for a slow one sent before it', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'txa-wh-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Which of a slow statement and a quick one sent after it answers first. */
  async function firstToAnswer(wh: EmbeddedWarehouse): Promise<string[]> {
    const order: string[] = [];
    // 30 one-row blocks sleeping 0.1 s each: seconds of a statement that holds its session.
    const slow = wh.queryText('SELECT sleepEachRow(0.1) FROM numbers(30)', 'TSV', { settings: { max_block_size: 1 } }).then(() => order.push('slow'));
    const quick = wh.queryText("SELECT 'quick'", 'TSV').then(() => order.push('quick'));
    await Promise.all([slow, quick]);
    return order;
  }

  it('answers the quick one first on a pool, and after the slow one on a single session', async () => {
    const pool = new EmbeddedWarehouse(dir);
    const single = new EmbeddedWarehouse(dir, { sessions: 1 });
    try {
      expect(await firstToAnswer(pool)).toEqual(['quick', 'slow']);
      expect(pool.servingSessions).toBe(2);
      expect(await firstToAnswer(single)).toEqual(['slow', 'quick']);
      expect(single.servingSessions).toBe(1);
    } finally {
      await pool.close();
      await single.close();
    }
  });

  it('reads on another session what an insert on one wrote, once it ended', async () => {
    const wh = new EmbeddedWarehouse(dir);
    try {
      await wh.exec('CREATE TABLE IF NOT EXISTS pool_t (k String) ENGINE = MergeTree ORDER BY k');
      // Hold one session, so the insert and the read after it go to others.
      const slow = wh.queryText('SELECT sleepEachRow(0.1) FROM numbers(10)', 'TSV', { settings: { max_block_size: 1 } });
      await wh.insert('pool_t', [{ k: 'a' }, { k: 'b' }]);
      expect(await wh.query('SELECT k FROM pool_t ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }]);
      await slow;
    } finally {
      await wh.close();
    }
  });
});
