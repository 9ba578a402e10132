// An insert into the base table already running when migration 090 starts (an ingest batch
// of another process, in flight during an upgrade) was built before 090's view existed, so
// its rows reach tx_by_signature_v3 only through 090's copy of tx_by_signature_v2; the copy
// must therefore wait for it, or those records exist in the base table and nowhere in the
// records by signature (getTransaction answers null, a replay stores them twice). Its own
// file: chDB allows one data directory per process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';
import { decodedRecords } from '../../warehouse/signature-records.ts';

const START = 1_735_689_600; // 2025-01-01
const FIELDS = `concat(toString(sig_key), '|', signature, '|', toString(instruction_index), '|', toString(slot), '|', toString(block_time), '|',
  program_id, '|', protocol_name, '|', instruction_type, '|', toString(fee), '|', toString(compute_units), '|', toString(accounts_count), '|', toString(success))`;

describe('migration 090 with an insert in flight', () => {
  it('keeps the records of an insert that began before it and ended after its copy', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-mig090-inflight-'));
    const wh = new EmbeddedWarehouse(path.join(dir, 'data'));
    const rows = async (from: string) => (await wh.query<{ r: string }>(`SELECT ${FIELDS} AS r FROM ${from} ORDER BY r`)).map((x) => x.r);
    try {
      await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version < 90),
      );
      await insertDemoRows(wh, { seed: 5, total: 2000, offset: 0, count: 2000, startTime: START, endTime: START + 86_400 });
      // ~2 s, one block (so one part, committed at its end), on a session of its own.
      const inflight = wh.exec(
        `INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
         SELECT concat('inflight', toString(number)), 0, number, toDateTime({t:UInt32}, 'UTC') + number, 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6',
                'route', 5000, 1000, 1, true, ['a']
         FROM numbers(2000) WHERE NOT ignore(sleepEachRow(0.001))`,
        { sideSession: 0, params: { t: START }, settings: { max_block_size: 65_536, function_sleep_max_microseconds_per_block: 10_000_000 } },
      );
      for (let i = 0; i < 100; i++) {
        const [p] = await wh.query<{ n: string }>("SELECT count() AS n FROM system.processes WHERE query_kind = 'Insert'");
        if (Number(p!.n) > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const r = await migrate(
        wh,
        () => {},
        loadMigrations().filter((m) => m.version <= 90),
      );
      expect(r.applied).toEqual(['090_packed_signature_records']);
      await inflight;
      const expected = await rows('(SELECT cityHash64(signature) AS sig_key, * FROM transactions)');
      expect(expected.length).toBe(4000);
      expect(await rows(decodedRecords('tx_by_signature_v3'))).toEqual(expected);
    } finally {
      await wh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
