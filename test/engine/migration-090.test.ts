// A store seeded before migration 090 (tx_by_signature_v2, several parts) upgrades with no
// record lost or doubled: every record's fields read back from 090's one-column record
// exactly as 021's columns held them, records ingested after it land once, lookups by
// signature answer what the base table says, and a read of keys that live in one part skips
// the granules of the others (the Bloom filter of sig_key). Its own file: chDB allows one
// data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SignatureLookup } from '../../api/analytics/records/signature-lookup.ts';
import { toTransaction, TX_COLUMNS, type TxRow } from '../../api/analytics/records/transactions.ts';
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';
import { decodedRecords } from '../../warehouse/signature-records.ts';

const RECORDS = 6000;
const START = 1_735_689_600; // 2025-01-01

/** Every record of a by-signature source, each field as text, as a sorted multiset. */
const FIELDS = `concat(toString(sig_key), '|', signature, '|', toString(instruction_index), '|', toString(slot), '|', toString(block_time), '|',
  program_id, '|', protocol_name, '|', instruction_type, '|', toString(fee), '|', toString(compute_units), '|', toString(accounts_count), '|', toString(success))`;

describe('migration 090', () => {
  it('keeps every record once with every field, answers lookups as the base table does, and skips parts without the key', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig090-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    const window = (offset: number, count: number) => ({ seed: 17, total: 2 * RECORDS, offset, count, startTime: START, endTime: START + 86_400 });
    const rows = async (from: string) => (await wh.query<{ r: string }>(`SELECT ${FIELDS} AS r FROM ${from} ORDER BY r`)).map((x) => x.r);
    const expected = () => rows(`(SELECT cityHash64(signature) AS sig_key, * FROM transactions)`);
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 90),
      );
      // Several parts, as a store that has been ingesting has.
      await wh.exec('SYSTEM STOP MERGES tx_by_signature_v2');
      for (let i = 0; i < 3; i++) await insertDemoRows(wh, window(i * (RECORDS / 3), RECORDS / 3));
      // Instruction types with the characters a JSON array must escape (any 1-128 characters pass ingest).
      const odd = ['say "hi"\\ \t/\n\u00e9\u2028', '\u0000\u001f', '[1,2]'];
      await wh.exec(
        `INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
        SELECT concat('odd', toString(number)), 0, 18446744073709551615 - number, toDateTime('2025-01-01 00:00:00', 'UTC') + number,
               'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', {odd:Array(String)}[number + 1], 18446744073709551615, 4294967295, 65535, 0, ['a']
        FROM numbers(3)`,
        { params: { odd } },
      );
      // And one whose instruction type holds bytes that are not UTF-8 (a store that took such
      // Kafka records as they came, before the pipeline re-serialised them).
      await wh.exec(`INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
        VALUES ('odd3', 0, 1, toDateTime('2025-01-01 00:00:00', 'UTC'), 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', unhex('41FFFEEDA08042'), 1, 1, 1, 1, ['a'])`);
      const before = await rows('tx_by_signature_v2');
      expect(before.length).toBe(RECORDS + odd.length + 1);
      expect(before).toEqual(await expected());
      for (const t of odd) expect(before.some((r) => r.includes(`|${t}|`))).toBe(true);

      const r = await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version <= 90),
      );
      expect(r.applied).toEqual(['090_packed_signature_records']);
      expect(await wh.query("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'tx_by_signature_v2%'")).toEqual([]);
      // Every record once, each field as 021's columns held it.
      expect(await rows(decodedRecords('tx_by_signature_v3'))).toEqual(before);

      // Records ingested after it reach the new table once, through its view; kept in parts of their own.
      await wh.exec('SYSTEM STOP MERGES tx_by_signature_v3');
      for (let i = 0; i < 2; i++) await insertDemoRows(wh, window(RECORDS + i * (RECORDS / 2), RECORDS / 2));
      const after = await rows(decodedRecords('tx_by_signature_v3'));
      expect(after.length).toBe(2 * RECORDS + odd.length + 1);
      expect(after).toEqual(await expected());

      // Lookups by signature answer the base table's record of lowest instruction index.
      const visible = new Set((await wh.query<{ p: string }>('SELECT DISTINCT protocol_name AS p FROM transactions')).map((x) => x.p));
      const signatures = [
        ...(await wh.query<{ s: string }>('SELECT DISTINCT signature AS s FROM transactions ORDER BY cityHash64(s, 90) LIMIT 60')).map((x) => x.s),
        'odd0',
        'odd1',
        'odd2',
        'odd3',
      ];
      const lookup = new SignatureLookup({ table: 'tx_by_signature_v3' });
      const found = await Promise.all([...signatures, 'not-a-stored-signature'].map((s) => lookup.find(wh, s, visible)));
      const oracle = await Promise.all(
        signatures.map(async (s) => {
          const [row] = await wh.query<TxRow>(`SELECT ${TX_COLUMNS} FROM transactions WHERE signature = {s:String} ORDER BY instruction_index LIMIT 1`, {
            params: { s },
          });
          return toTransaction(row!);
        }),
      );
      expect(found).toEqual([...oracle, null]);

      // Keys of one part only: the other parts' granules are skipped by their filters, so a
      // read selects about one granule a key, not one in every part (as it does without them).
      const parts = await wh.query<{ name: string }>(
        "SELECT name FROM system.parts WHERE active AND database = currentDatabase() AND table = 'tx_by_signature_v3' ORDER BY name",
      );
      expect(parts.length).toBeGreaterThanOrEqual(3);
      const keys = (
        await wh.query<{ k: string }>('SELECT toString(sig_key) AS k FROM tx_by_signature_v3 WHERE _part = {p:String} ORDER BY cityHash64(k) LIMIT 5', {
          params: { p: parts.at(-1)!.name },
        })
      ).map((x) => x.k);
      const selectedMarks = async (read: () => Promise<unknown>): Promise<number> => {
        const count = async () => Number((await wh.query<{ n: string }>("SELECT value AS n FROM system.events WHERE event = 'SelectedMarks'"))[0]?.n ?? 0);
        const start = await count();
        await read();
        return (await count()) - start;
      };
      let keyed: { sk: string }[] = [];
      const withFilters = await selectedMarks(async () => {
        keyed = await new SignatureLookup({ table: 'tx_by_signature_v3' }).byKeys(wh, keys);
      });
      expect(new Set(keyed.map((x) => x.sk))).toEqual(new Set(keys));
      const withoutFilters = await selectedMarks(() =>
        wh.query(`SELECT record FROM tx_by_signature_v3 WHERE sig_key IN (${keys.join(',')})`, { settings: { use_skip_indexes: 0 } }),
      );
      expect(withFilters).toBeGreaterThanOrEqual(1);
      expect(withFilters).toBeLessThanOrEqual(keys.length + 1); // a false positive (p = 0.001 a key) may add one
      expect(withoutFilters).toBeGreaterThanOrEqual(2 * withFilters);
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
