// A store made before migration 021 (the signature lookup's second layout) keeps every
// record across the upgrade. Its own file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

describe('migration 021', () => {
  it('021 moves the records of an existing signature lookup to its new layout, each once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig021-'));
    const other = new EmbeddedWarehouse(path.join(dir, 'data'));
    try {
      await migrate(
        other,
        () => {},
        loadMigrations().filter((m) => m.version < 21),
      );
      await other.exec(`INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
        SELECT concat('sig', toString(number)), number % 3, 1000 + number, toDateTime('2025-01-01 00:00:00', 'UTC') + number, 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', 'route', 5000, 100, 3, 1, ['a'] FROM numbers(2000)`);
      expect(await other.query('SELECT count() AS n FROM tx_by_signature')).toEqual([{ n: '2000' }]);
      const r = await migrate(
        other,
        () => {},
        loadMigrations().filter((m) => m.version <= 21),
      );
      expect(r.applied).toContain('021_tx_by_signature_v2');
      expect(await other.query('SELECT count() AS n, uniqExact(signature, instruction_index) AS u FROM tx_by_signature_v2')).toEqual([
        { n: '2000', u: '2000' },
      ]);
      expect(await other.query("SELECT name FROM system.tables WHERE name IN ('tx_by_signature', 'tx_by_signature_mv')")).toEqual([]);
      // New inserts reach the new table through its view.
      await other.exec(`INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
        VALUES ('late', 0, 1, '2025-01-02 00:00:00', 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', 'route', 5000, 100, 3, 1, ['a'])`);
      expect(await other.query('SELECT count() AS n FROM tx_by_signature_v2')).toEqual([{ n: '2001' }]);
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
