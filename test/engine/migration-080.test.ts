// A store seeded before migration 080 (tx_by_signature_v2 in wide parts, default merge
// policy) upgrades with no record lost or doubled: the by-signature rows stay exactly the
// base table's, records ingested after it land once, and parts merged after it are compact.
// (Its lookups read 090's table now: test/engine/migration-090.test.ts upgrades a store through
// both and compares their answers.) Its own file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

const RECORDS = 3000;
const START = 1_735_689_600; // 2025-01-01

describe('migration 080', () => {
  it('keeps every by-signature record once and makes merged parts compact', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig080-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    const window = (offset: number, count: number) => ({ seed: 11, total: 2 * RECORDS, offset, count, startTime: START, endTime: START + 86_400 });
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 80),
      );
      // Parts as a large store has them (wide: parts under 10 MB are compact by default), and
      // several of them, as a store that has been ingesting has.
      await wh.exec('ALTER TABLE tx_by_signature_v2 MODIFY SETTING min_bytes_for_wide_part = 0');
      const partTypes = async () =>
        (
          await wh.query<{ part_type: string }>(
            "SELECT part_type FROM system.parts WHERE active AND database = currentDatabase() AND table = 'tx_by_signature_v2'",
          )
        ).map((p) => p.part_type);
      for (let i = 0; i < 3; i++) await insertDemoRows(wh, window(i * (RECORDS / 3), RECORDS / 3));
      // Every by-signature row, each column, as a sorted multiset; and what the base table says it must be.
      const rows = () =>
        wh.query<{ r: string }>(`SELECT concat(toString(sig_key), '|', signature, '|', toString(instruction_index), '|', toString(slot), '|',
          toString(block_time), '|', program_id, '|', protocol_name, '|', instruction_type, '|', toString(fee), '|', toString(compute_units), '|',
          toString(accounts_count), '|', toString(success)) AS r FROM tx_by_signature_v2 ORDER BY r`);
      const expected = () =>
        wh.query<{ r: string }>(`SELECT concat(toString(cityHash64(signature)), '|', signature, '|', toString(instruction_index), '|', toString(slot), '|',
          toString(block_time), '|', program_id, '|', protocol_name, '|', instruction_type, '|', toString(fee), '|', toString(compute_units), '|',
          toString(accounts_count), '|', toString(success)) AS r FROM transactions ORDER BY r`);
      const before = await rows();
      expect(before).toEqual(await expected());
      expect(before.length).toBe(RECORDS);
      expect(new Set(await partTypes())).toEqual(new Set(['Wide']));

      const r = await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version <= 80),
      );
      expect(r.applied).toEqual(['080_signature_point_store']);
      // The rows are rewritten into compact parts, each record once.
      expect(await rows()).toEqual(before);
      expect(new Set(await partTypes())).toEqual(new Set(['Compact']));
      const [leftover] = await wh.query<{ n: string }>(
        "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name LIKE 'tx_by_signature_v2_compact%'",
      );
      expect(leftover!.n).toBe('0');
      // Records ingested after it reach the table once, through 021's view as before; a
      // merge (the one the new policy would run by itself an hour later) makes one compact part.
      await insertDemoRows(wh, window(RECORDS, RECORDS));
      await wh.exec('OPTIMIZE TABLE tx_by_signature_v2 FINAL');
      expect(await partTypes()).toEqual(['Compact']);
      const after = await rows();
      expect(after.length).toBe(2 * RECORDS);
      expect(after).toEqual(await expected());
      const kept = new Set(after.map((x) => x.r));
      expect(before.every((x) => kept.has(x.r))).toBe(true);
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
