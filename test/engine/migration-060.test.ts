// A store seeded on the schema before migration 060 (040's wide listing table beside 003's
// references) upgrades with no address row lost or doubled, and every page of an address
// listing answers the same records in the same order as 040's table listed them. Its own
// file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listAddressTransactions } from '../../api/analytics/records/address-transactions.ts';
import { PageTokens } from '../../api/analytics/paging/page-token.ts';
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

const RECORDS = 4000;
const START = 1_735_689_600; // 2025-01-01

describe('migration 060', () => {
  it('drops the listing copy; every address row stays once, and address pages list what 040 listed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig060-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 60),
      );
      await insertDemoRows(wh, { seed: 7, total: RECORDS, offset: 0, count: RECORDS, startTime: START, endTime: START + 86_400 });
      // What 040's table held: one row per (address, record), and each address's order.
      const rowsOf = (table: string) =>
        wh.query<{ r: string }>(
          `SELECT concat(address, '|', toString(sig_key), '|', toString(instruction_index), '|', toString(block_time)) AS r FROM ${table} ORDER BY r`,
        );
      const listingRows = await rowsOf('tx_by_address_listing');
      const addresses = await wh.query<{ a: string; n: string }>(
        'SELECT address AS a, count() AS n FROM tx_by_address_listing GROUP BY a ORDER BY n DESC, a LIMIT 3',
      );
      const listed = async (a: string, dir: 'ASC' | 'DESC') =>
        (
          await wh.query<{ s: string }>(
            `SELECT signature AS s FROM tx_by_address_listing WHERE address = {a:String}
         ORDER BY block_time ${dir}, sig_key ${dir}, instruction_index ${dir}, signature ${dir}`,
            { params: { a } },
          )
        ).map((r) => r.s);
      const before = new Map<string, string[]>();
      for (const { a } of addresses) for (const d of ['ASC', 'DESC'] as const) before.set(`${a}|${d}`, await listed(a, d));

      const r = await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version <= 60),
      );
      expect(r.applied).toEqual(['060_one_address_table']);
      const [gone] = await wh.query<{ n: string }>(
        "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name LIKE 'tx_by_address_listing%'",
      );
      expect(gone!.n).toBe('0');
      // No row lost or doubled: the references are exactly the listing's rows, each once,
      // and exactly one per distinct address (accounts and program) of each base record.
      const refs = await rowsOf('tx_by_address');
      expect(refs.length).toBe(listingRows.length);
      expect(refs).toEqual(listingRows);
      const [expected] = await wh.query<{ n: string }>(
        'SELECT sum(length(arrayDistinct(arrayPushBack(accounts, toString(program_id))))) AS n FROM transactions',
      );
      expect(String(refs.length)).toBe(expected!.n);

      // Pages are read by today's code, so on today's schema (later migrations keep every record).
      await migrate(wh, () => {});
      const visible = (await wh.query<{ p: string }>('SELECT DISTINCT protocol_name AS p FROM transactions')).map((x) => x.p);
      for (const { a, n } of addresses) {
        for (const [sortOrder, d] of [
          ['asc', 'ASC'],
          ['desc', 'DESC'],
        ] as const) {
          const got: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await listAddressTransactions(wh, new PageTokens('migration-060'), { address: a, filters: {}, sortOrder, limit: 50, cursor }, visible);
            got.push(...page.data.map((t) => t.signature));
            cursor = page.next ?? undefined;
          } while (cursor !== undefined);
          expect(got.length).toBe(Number(n));
          expect(got).toEqual(before.get(`${a}|${d}`));
        }
      }
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
