// A store made before migration 050 (fewest and most compute units in the hourly views)
// gets the extremes of every stored hour, and records stored after it reach the views with
// theirs; every figure the views held before reads the same after (old answers identical).
// Its own file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

const INSERT = `INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)`;
const rows = (from: number, n: number, at: string) => `${INSERT}
  SELECT concat('sig', toString(number)), 0, 1000 + number, toDateTime('${at}', 'UTC') + number * 97, 'P', if(number % 3 = 0, 'pump_fun', 'jupiter_v6'),
         if(number % 2 = 0, 'route', 'swap'), 5000 + (number * 7919) % 3000, 100 + (number * 104729) % 90000, 3 + number % 5, number % 5 != 0, ['a']
  FROM numbers(${from}, ${n})`;

/** Every figure of both views, merged per key, with the base table's extremes beside them. */
const OLD_FIGURES = `SELECT protocol_name, hour_start, sum(tx_count) AS n, sum(success_count) AS ok, sum(fee_sum) AS fees, min(fee_min) AS fmin, max(fee_max) AS fmax,
    sum(cu_sum) AS cus, sum(accounts_sum) AS acc, min(first_seen) AS first, max(last_seen) AS last, max(max_slot) AS slot,
    uniqExactMerge(instruction_types) AS types, uniqExactMerge(programs) AS progs, quantilesTDigestMerge(0.5, 0.95, 0.99)(cu_digest) AS cuq
  FROM protocol_hourly GROUP BY protocol_name, hour_start ORDER BY protocol_name, hour_start`;
const OLD_INSTRUCTION = `SELECT protocol_name, instruction_type, hour_start, sum(tx_count) AS n, min(fee_min) AS fmin, max(fee_max) AS fmax, sum(cu_sum) AS cus,
    quantilesTDigestMerge(0.5, 0.95, 0.99)(fee_digest) AS feeq
  FROM instruction_hourly GROUP BY protocol_name, instruction_type, hour_start ORDER BY protocol_name, instruction_type, hour_start`;
const EXTREMES = (table: string, keys: string) => `SELECT count() AS wrong FROM (
    SELECT ${keys}, min(cu_min) AS lo, max(cu_max) AS hi FROM ${table} GROUP BY ${keys}) AS v
  FULL OUTER JOIN (SELECT ${keys.replace('hour_start', 'toStartOfHour(block_time) AS hour_start')}, min(compute_units) AS lo, max(compute_units) AS hi FROM transactions GROUP BY ${keys}) AS b
  USING (${keys}) WHERE v.lo != b.lo OR v.hi != b.hi`;

describe('migration 050', () => {
  it('backfills the extremes of stored hours, keeps every old figure, and views carry them for new records', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig050-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 50),
      );
      await wh.exec(rows(0, 1500, '2025-01-01 00:00:00'));
      await wh.exec(rows(1500, 500, '2025-01-01 10:00:00'));
      const before = [await wh.query(OLD_FIGURES), await wh.query(OLD_INSTRUCTION)];
      const r = await migrate(wh);
      expect(r.applied).toContain('050_compute_extremes');
      expect([await wh.query(OLD_FIGURES), await wh.query(OLD_INSTRUCTION)]).toEqual(before);
      expect(await wh.query(EXTREMES('protocol_hourly', 'protocol_name, hour_start'))).toEqual([{ wrong: '0' }]);
      expect(await wh.query(EXTREMES('instruction_hourly', 'protocol_name, instruction_type, hour_start'))).toEqual([{ wrong: '0' }]);
      // Later records, some in hours the backfill wrote: the views' own extremes merge with them.
      await wh.exec(rows(2000, 800, '2025-01-01 20:00:00'));
      expect(await wh.query(EXTREMES('protocol_hourly', 'protocol_name, hour_start'))).toEqual([{ wrong: '0' }]);
      expect(await wh.query(EXTREMES('instruction_hourly', 'protocol_name, instruction_type, hour_start'))).toEqual([{ wrong: '0' }]);
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
