// One contract every Warehouse transport must pass; each transport's test file runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import { Analytics } from '../../api/analytics/analytics.ts';
import { PageTokens } from '../../api/analytics/paging/page-token.ts';
import { DataVersion } from '../../warehouse/data-version.ts';
import { migrate } from '../../warehouse/migrate.ts';
import { ProtocolRegistry } from '../../warehouse/protocol-registry.ts';
import { WarehouseError, type Warehouse } from '../../warehouse/warehouse.ts';
import { SIGNATURE_RECORDS } from '../../warehouse/signature-records.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { b58, demoRecords, FIXTURE_START, PROGRAM_OF } from './fixtures.ts';
import { protocolStats, transaction } from './oracle.ts';
import { HOSTILE_STRINGS } from './hostile-strings.ts';

export function warehouseContract(name: string, open: () => Promise<{ wh: Warehouse; close(): Promise<void> }>): void {
  describe(`warehouse contract: ${name}`, () => {
    let wh: Warehouse;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ wh, close } = await open());
      await wh.exec(
        "CREATE TABLE IF NOT EXISTS contract_t (id UInt64, name String, tags Array(String), at DateTime('UTC') DEFAULT toDateTime(0, 'UTC')) ENGINE = MergeTree ORDER BY id",
      );
    });
    afterAll(async () => close());

    it('inserts rows with a column list (other columns take their defaults) and reads them back', async () => {
      await wh.insert(
        'contract_t',
        [
          { id: '18446744073709551615', name: 'O\'Brien \\ "quoted"\nline', tags: ['a', 'b'] },
          { id: 2, name: 'two', tags: [] },
        ],
        { columns: ['id', 'name', 'tags'] },
      );
      const rows = await wh.query<{ id: string; name: string; tags: string[]; at: string }>('SELECT id, name, tags, at FROM contract_t ORDER BY id');
      expect(rows).toEqual([
        { id: '2', name: 'two', tags: [], at: '1970-01-01 00:00:00' },
        { id: '18446744073709551615', name: 'O\'Brien \\ "quoted"\nline', tags: ['a', 'b'], at: '1970-01-01 00:00:00' },
      ]);
    });

    it('binds parameters in the engine, never in the SQL text', async () => {
      const rows = await wh.query<{ n: string }>('SELECT name AS n FROM contract_t WHERE name = {name:String} AND has({ids:Array(UInt64)}, id)', {
        params: { name: 'O\'Brien \\ "quoted"\nline', ids: [7, 2] },
      });
      expect(rows).toEqual([]);
      const big = await wh.query<{ n: string }>('SELECT name AS n FROM contract_t WHERE name = {name:String} AND id = {id:UInt64}', {
        params: { name: 'O\'Brien \\ "quoted"\nline', id: '18446744073709551615' },
      });
      expect(big).toEqual([{ n: 'O\'Brien \\ "quoted"\nline' }]);
      const none = await wh.query('SELECT 1 FROM contract_t WHERE name = {name:String}', { params: { name: "' OR 1=1 --" } });
      expect(none).toEqual([]);
      // An array of UInt64 from bigints (an address page's signature keys) arrives exact, past 2^53.
      const keys = await wh.query<{ k: string }>('SELECT toString(arrayJoin({keys:Array(UInt64)})) AS k', {
        params: { keys: [18446744073709551615n, 9007199254740993n, 0n] },
      });
      expect(keys.map((r) => r.k)).toEqual(['18446744073709551615', '9007199254740993', '0']);
    });

    it('writes parameters as literals on request (literalParams) with the bound answer, whatever the string', async () => {
      for (const s of HOSTILE_STRINGS) {
        const sql = 'SELECT {s:String} AS s, length({s:String}) AS n, {a:Array(String)} AS a, {k:UInt64} AS k, {b:UInt8} AS b';
        // Hostile strings inside an array are left to the embedded engine: the HTTP shim's
        // unescaping of array parameters breaks on a quote (a bound read, the shim's, not literalParams).
        const params = { s, a: wh.transport === 'embedded' ? [s, '', s] : ['x', ''], k: '18446744073709551615', b: 255 };
        const literal = await wh.query<Record<string, unknown>>(sql, { params, literalParams: true });
        expect(literal).toEqual(await wh.query(sql, { params }));
        expect(literal[0]?.s).toBe(s);
        expect(Number(literal[0]?.n)).toBe(Buffer.byteLength(s));
      }
      // The address key of a hostile address, on either path; the key condition reads only the key's granules.
      const key = 'SELECT toString(reinterpretAsUInt128(sipHash128({addr:String}))) AS k';
      for (const addr of ["'); DROP TABLE contract_t; --", 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4']) {
        expect(await wh.query(key, { params: { addr }, literalParams: true })).toEqual(await wh.query(key, { params: { addr } }));
      }
      const named = 'SELECT id FROM contract_t WHERE name IN {names:Array(String)} AND id > {after:UInt64} ORDER BY id LIMIT {lim:UInt32}';
      const args = { names: ['two', 'nobody'], after: '1', lim: 1 };
      expect(await wh.query(named, { params: args, literalParams: true })).toEqual([{ id: '2' }]);
      // A type the renderer does not write fails (embedded: it would otherwise be bound).
      if (wh.transport === 'embedded') await expect(wh.query('SELECT {f:Float64}', { params: { f: 1 }, literalParams: true })).rejects.toThrow(/Float64/);
    });

    it('returns text in a named format and streams the same bytes', async () => {
      // Enough rows for several streamed chunks: the header must still come once.
      const sql = 'SELECT number AS n, toString(number) AS s FROM numbers(100000)';
      for (const format of ['CSVWithNames', 'TSVWithNamesAndTypes']) {
        const text = await wh.queryText(sql, format);
        expect(text.trim().split('\n')).toHaveLength(format === 'CSVWithNames' ? 100_001 : 100_002);
        const parts: Buffer[] = [];
        for await (const chunk of wh.stream(sql, format)) parts.push(Buffer.from(chunk));
        expect(parts.length).toBeGreaterThan(format === 'CSVWithNames' && wh.transport === 'embedded' ? 1 : 0);
        expect(Buffer.concat(parts).toString('utf8')).toBe(text);
      }
      expect((await wh.queryText('SELECT 1 AS n', 'CSVWithNames')).split('\n')[0]).toBe('"n"');
    });

    it('applies per-query settings (limits are enforced by the engine)', async () => {
      await expect(wh.query('SELECT number FROM numbers(100)', { settings: { max_result_rows: 10, result_overflow_mode: 'throw' } })).rejects.toBeInstanceOf(
        WarehouseError,
      );
      expect(await wh.query('SELECT number FROM numbers(100)', { settings: { max_result_rows: 1000 } })).toHaveLength(100);
    });

    it('runs a statement on a side session over the same data, with its settings, as on its own', async () => {
      const sql = 'SELECT id, name FROM contract_t ORDER BY id';
      const own = await wh.query(sql);
      // Two side sessions at once (the coalesced point reads' case), and the same settings applied.
      const [a, b] = await Promise.all([wh.query(sql, { sideSession: 0 }), wh.query(sql, { sideSession: 1 })]);
      expect(a).toEqual(own);
      expect(b).toEqual(own);
      await expect(
        wh.query('SELECT number FROM numbers(100)', { sideSession: 0, settings: { max_result_rows: 10, result_overflow_mode: 'throw' } }),
      ).rejects.toBeInstanceOf(WarehouseError);
    });

    it('reports engine errors with their ClickHouse code', async () => {
      const err = await wh.query('SELEC 1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WarehouseError);
      expect((err as WarehouseError).clickhouseCode).toBe(62);
    });

    it('runs the migrations, the ingest pipeline and the analytics layer', async () => {
      await migrate(wh);
      expect((await migrate(wh)).applied).toEqual([]);
      const dataVersion = new DataVersion();
      const registry = new ProtocolRegistry(wh);
      const pipeline = new IngestPipeline(wh, registry, dataVersion, createLogger('silent'), { maxRecordBytes: 65536, batchRows: 500 });
      const records = await demoRecords({ wh }, 1500, 3);
      const report = await pipeline.ingest(
        records.map((value, i) => ({ value, position: { line: i + 1 } })),
        'contract',
      );
      expect(report).toMatchObject({ accepted: 1500, rejected: [] });
      const analytics = new Analytics(wh, registry, dataVersion, new PageTokens('contract'));
      const stats = await analytics.protocolStats('jupiter_v6');
      expect(stats).toEqual(await protocolStats({ wh }, 'jupiter_v6'));
      const tx = await analytics.transaction(records.find((r) => r.protocol_name === 'pump_fun')!.signature);
      expect(tx?.protocolName).toBe('pump_fun');
    });

    it('stores and reads back hostile text in the records by signature exactly as the base table holds it, and replays nothing', async () => {
      await migrate(wh);
      const registry = new ProtocolRegistry(wh);
      const pipeline = new IngestPipeline(wh, registry, new DataVersion(), createLogger('silent'), { maxRecordBytes: 65536, batchRows: 500 });
      const types = ['say "hi" \\ a/b', '\u0000\u001f\u007f\n\t', '\u2028\u2029 😀 é', 'x'.repeat(128)];
      const line = (i: number, t: string, extra: Record<string, unknown> = {}) =>
        JSON.stringify({
          signature: b58(`contract-hostile-${i}`, 88),
          instruction_index: i,
          slot: '17179869182', // the largest the record id takes (core/limits/record-id.ts)
          block_time: FIXTURE_START + i,
          program_id: PROGRAM_OF.jupiter_v6,
          protocol_name: 'jupiter_v6',
          instruction_type: t,
          fee: Number.MAX_SAFE_INTEGER,
          compute_units: 4294967295,
          accounts: [b58('contract-acct', 44)],
          accounts_count: 65535,
          success: false,
          ...extra,
        });
      const [pre, post] = line(9, 'MARK').split('MARK') as [string, string];
      const lines: (string | Uint8Array)[] = [
        ...types.map((t, i) => line(i, t)),
        new Uint8Array(Buffer.concat([Buffer.from(`${pre}A`), Buffer.from([0xff, 0xc0]), Buffer.from(`B${post}`)])),
      ];
      const ingestAll = () =>
        pipeline.ingest(
          lines.map((value, i) => ({ value, position: { line: i + 1 } })),
          'contract',
        );
      expect(await ingestAll()).toMatchObject({ accepted: lines.length, rejected: [] });
      const sigs = [...types.keys(), 9].map((i) => b58(`contract-hostile-${i}`, 88));
      const fields = `concat(signature, '|', toString(instruction_index), '|', toString(slot), '|', toString(block_time), '|', program_id, '|', protocol_name, '|',
        instruction_type, '|', toString(fee), '|', toString(compute_units), '|', toString(accounts_count), '|', toString(success))`;
      const read = async (from: string) =>
        (
          await wh.query<{ r: string }>(`SELECT ${fields} AS r FROM ${from} WHERE signature IN {s:Array(String)} ORDER BY r`, { params: { s: sigs, sigs } })
        ).map((x) => x.r);
      expect(await read(SIGNATURE_RECORDS)).toEqual(await read(TABLES.transactions));
      const analytics = new Analytics(wh, registry, new DataVersion(), new PageTokens('contract'));
      for (const s of sigs) expect(await analytics.transaction(s)).toEqual(await transaction({ wh }, s));
      expect(await ingestAll()).toMatchObject({ accepted: 0, duplicates: lines.length, rejected: [] });
    });
  });
}
