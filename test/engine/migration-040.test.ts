// A store made before migration 040 (the address listing table) gets every existing record's
// address rows in the new table, each once, equal to the references of tx_by_address and
// carrying the base table's fields. Its own file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

const INSERT = `INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)`;

describe('migration 040', () => {
  it('040 copies the address rows of records stored before it, each once; later records arrive through its view', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig040-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 40),
      );
      // 2000 records, each with two accounts (one listed twice in half of them: one row per address) and the program: 6000 rows.
      await wh.exec(`${INSERT}
        SELECT concat('sig', toString(number)), number % 3, 1000 + number, toDateTime('2025-01-01 00:00:00', 'UTC') + number, 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
               'jupiter_v6', 'route', 5000 + number, 100 + number, 3, number % 5 != 0, if(number % 2 = 0, ['a', concat('b', toString(number % 7)), 'a'], ['c', 'a']) FROM numbers(2000)`);
      // Up to 060, which drops this table again (test/engine/migration-060.test.ts).
      const r = await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 60),
      );
      expect(r.applied).toContain('040_address_listing');
      const same = async () =>
        wh.query(`
        SELECT (SELECT count() FROM tx_by_address) AS refs, (SELECT count() FROM tx_by_address_listing) AS rows,
               (SELECT uniqExact(address, signature, instruction_index) FROM tx_by_address_listing) AS distinct_rows,
               (SELECT count() FROM tx_by_address_listing AS l INNER JOIN transactions AS t ON t.signature = l.signature AND t.instruction_index = l.instruction_index
                 WHERE l.sig_key = cityHash64(t.signature) AND l.slot = t.slot AND l.block_time = t.block_time AND l.fee = t.fee AND l.compute_units = t.compute_units
                   AND l.success = t.success AND l.instruction_type = t.instruction_type AND l.accounts_count = t.accounts_count
                   AND (has(t.accounts, l.address) OR l.address = t.program_id)) AS matching`);
      expect(await same()).toEqual([{ refs: '6000', rows: '6000', distinct_rows: '6000', matching: '6000' }]);
      await wh.exec(
        `${INSERT} VALUES ('late', 0, 1, '2025-01-02 00:00:00', 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', 'route', 5000, 100, 3, 1, ['a', 'z'])`,
      );
      expect(await same()).toEqual([{ refs: '6003', rows: '6003', distinct_rows: '6003', matching: '6003' }]);
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
