import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoRecords, ingest, tableCounts } from '../support/fixtures.ts';
import * as oracle from '../support/oracle.ts';
import { startServices } from '../support/services.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';

let s: Awaited<ReturnType<typeof startServices>>;
let records: IngestRecord[];

beforeAll(async () => {
  s = await startServices({ INGEST_BATCH_ROWS: '700' });
  records = await demoRecords(s, 4000);
  const report = await ingest(s, records);
  expect(report.rejected).toEqual([]);
});
afterAll(async () => s.cleanup());

const q = async <T>(sql: string): Promise<T[]> => s.wh.query<T>(sql);

describe('ingest pipeline and views', () => {
  it('stores every record once and every view total equals the base-table total', async () => {
    const counts = await tableCounts(s);
    const identities = new Set(records.map((r) => `${r.signature}#${r.instruction_index ?? 0}`));
    expect(counts.transactions).toBe(identities.size);
    expect(counts.tx_rid_by_sig).toBe(counts.transactions);
    expect(counts.tx_by_rid).toBe(counts.transactions);
    expect(counts.protocol_hourly).toBe(counts.transactions);
    expect(counts.instruction_hourly).toBe(counts.transactions);
    const expectedAddressRows = records.reduce((n, r) => n + new Set([...(r.accounts ?? []), r.program_id]).size, 0);
    expect(counts.tx_by_address_v2).toBe(expectedAddressRows);
  });

  it('hourly view sums match the base table per protocol and hour', async () => {
    const view = await q<Record<string, string>>(`
      SELECT protocol_name, toUInt32(hour_start) h, sum(tx_count) c, sum(success_count) ok, sum(fee_sum) f, min(fee_min) fmin,
             max(fee_max) fmax, sum(cu_sum) cu, sum(accounts_sum) acc, toUInt32(min(first_seen)) fs, toUInt32(max(last_seen)) ls,
             max(max_slot) slot, uniqExactMerge(instruction_types) it, uniqExactMerge(programs) pr
      FROM protocol_hourly GROUP BY protocol_name, h ORDER BY protocol_name, h`);
    const base = await oracle.protocolHourly(s);
    expect(view.length).toBeGreaterThan(100);
    expect(view).toEqual(base);
  });

  it('instruction view sums match the base table', async () => {
    const view = await q(`SELECT protocol_name, instruction_type, sum(tx_count) c, sum(success_count) ok, sum(fee_sum) f, min(fee_min) fmin,
        max(fee_max) fmax, sum(cu_sum) cu, sum(accounts_sum) acc FROM instruction_hourly GROUP BY 1, 2 ORDER BY 1, 2`);
    const base = await oracle.instructionTotals(s);
    expect(view).toEqual(base);
  });

  it('failure view counts match the base table', async () => {
    const view = await q(`SELECT protocol_name, instruction_type, error_message, sum(failures) c, sum(fee_sum) f, sum(cu_sum) cu
      FROM failure_hourly GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
    const base = await oracle.failureTotals(s);
    expect(view.length).toBeGreaterThan(5);
    expect(view).toEqual(base);
  });

  it('replaying the same records changes no count anywhere', async () => {
    const before = await tableCounts(s);
    const feesBefore = await q(`SELECT sum(fee_sum) f FROM protocol_hourly`);
    const report = await ingest(s, records);
    // `accepted` counts newly stored records only: a replay stores none.
    expect(report.accepted).toBe(0);
    expect(report.duplicates).toBe(records.length);
    // A replay in a different order and batching is still a no-op.
    await ingest(s, [...records].reverse().slice(0, 1500));
    expect(await tableCounts(s)).toEqual(before);
    expect(await q(`SELECT sum(fee_sum) f FROM protocol_hourly`)).toEqual(feesBefore);
  });

  it('duplicates inside one submission are stored once', async () => {
    const before = await tableCounts(s);
    const fresh = { ...records[0]!, signature: `${records[0]!.signature.slice(0, 80)}AAAAAAAA`, instruction_index: 0 };
    const report = await ingest(s, [fresh, fresh, { ...fresh }]);
    expect(report).toMatchObject({ accepted: 1, duplicates: 2, rejected: [] });
    expect((await tableCounts(s)).transactions).toBe(before.transactions! + 1);
  });

  it('derives date, hour and day_of_week from block_time in UTC', async () => {
    const r = records[5]!;
    const [row] = await s.wh.query<{ date: string; hour: number; day_of_week: number }>(
      'SELECT toString(date) AS date, hour, day_of_week FROM transactions WHERE signature = {s:String} LIMIT 1',
      { params: { s: r.signature } },
    );
    const d = new Date(r.block_time * 1000);
    expect(row).toEqual({ date: d.toISOString().slice(0, 10), hour: d.getUTCHours(), day_of_week: d.getUTCDay() === 0 ? 7 : d.getUTCDay() });
  });
});

describe('bad input', () => {
  const good = (): Record<string, unknown> => ({
    signature: `${'5'.repeat(87)}a`,
    slot: 300_000_000,
    block_time: 1_735_600_000,
    program_id: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
    protocol_name: 'whirlpool',
    instruction_type: 'swap',
    fee: 5000,
    compute_units: 60_000,
    accounts: ['EfUr3UvsoY9EdC7QTaBRqhtyFbrLnBd2fDwkYhHXFvcN'],
    success: true,
  });

  it('rejects each bad record with its reason, stores the valid ones, and keeps them in the dead-letter table', async () => {
    const before = (await tableCounts(s)).transactions;
    const lines = [
      '{"signature": "not closed',
      JSON.stringify({ ...good(), fee: -1 }),
      JSON.stringify({ ...good(), fee: '5000' }),
      JSON.stringify({ ...good(), protocol_name: 'uniswap_v3' }),
      JSON.stringify({ ...good(), signature: '0OIl'.repeat(20) }),
      JSON.stringify({ ...good(), slot: undefined }),
      JSON.stringify({ ...good(), accounts: undefined }),
      JSON.stringify([1, 2, 3]),
      JSON.stringify({ ...good(), signature: '6'.repeat(88), log_messages: ['Program log: a', 'Program log: b'], accounts: undefined, accounts_count: 9 }),
      JSON.stringify(good()),
    ];
    const report = await s.pipeline.ingest(
      lines.map((value, i) => ({ value, position: { line: i + 1 } })),
      'test',
    );
    expect(report.accepted).toBe(2);
    const reasons = Object.fromEntries(report.rejected.map((r) => ['line' in r.position ? `line ${r.position.line}` : '?', r.detail]));
    const codes = report.rejected.map((r) => r.code);
    expect(codes).toEqual(['not_json', 'schema', 'schema', 'unknown_protocol', 'schema', 'schema', 'accounts_count_missing', 'not_object']);
    expect(reasons['line 1']).toMatch(/^not valid JSON/);
    expect(reasons['line 2']).toBe('fee must be >= 0');
    expect(reasons['line 3']).toBe('fee must be integer');
    expect(reasons['line 4']).toBe('unknown protocol_name "uniswap_v3"');
    expect(reasons['line 5']).toBe('signature must be a Base58 signature of 64-88 characters');
    expect(reasons['line 6']).toBe('missing required field slot');
    expect(reasons['line 7']).toBe('accounts_count is required when accounts is absent');
    expect(reasons['line 8']).toBe('record must be a JSON object');
    expect(Object.keys(reasons)).toHaveLength(8);
    expect((await tableCounts(s)).transactions).toBe(before! + 2);

    const [stored] = await s.wh.query<{ log_messages: string; accounts_count: number }>(
      'SELECT log_messages, accounts_count FROM transactions WHERE signature = {s:String}',
      { params: { s: '6'.repeat(88) } },
    );
    expect(stored).toEqual({ log_messages: 'Program log: a\nProgram log: b', accounts_count: 9 });

    const dead = await s.wh.query<{ position: string; code: string; reason: string; payload: string }>(
      "SELECT position, code, reason, payload FROM dead_letters WHERE source = 'test' ORDER BY position",
    );
    expect(dead.map((d) => d.position).sort()).toEqual(Object.keys(reasons).sort());
    expect(dead.find((d) => d.position === 'line 4')?.code).toBe('unknown_protocol');
    expect(dead.find((d) => d.position === 'line 4')?.payload).toBe(lines[3]);
  });

  it('checks program_id against the registry, for every source, and dead-letters a mismatch with its reason', async () => {
    const raydiumProgram = 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK';
    const report = await s.pipeline.ingest(
      [
        { value: { ...good(), signature: '7'.repeat(88), program_id: raydiumProgram }, position: { topic: 'topic', partition: 0, offset: '41' } },
        {
          value: JSON.stringify({ ...good(), signature: '8'.repeat(88), program_id: 'So11111111111111111111111111111111111111112' }),
          position: { topic: 'topic', partition: 0, offset: '42' },
        },
      ],
      'kafka:test-topic',
    );
    expect(report.accepted).toBe(0);
    expect(report.rejected).toEqual([
      {
        code: 'program_mismatch',
        detail: `program_id "${raydiumProgram}" is the program of raydium_amm_v3, not of whirlpool`,
        position: { topic: 'topic', partition: 0, offset: '41' },
      },
      {
        code: 'program_unregistered',
        detail:
          'program_id "So11111111111111111111111111111111111111112" is not in the protocol registry; the program of whirlpool is whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
        position: { topic: 'topic', partition: 0, offset: '42' },
      },
    ]);
    const dead = await s.wh.query<{ position: string; code: string; reason: string }>(
      "SELECT position, code, reason FROM dead_letters WHERE source = 'kafka:test-topic' ORDER BY position",
    );
    expect(dead).toEqual(
      report.rejected.map((r) => ({ position: `topic/0/${'offset' in r.position ? r.position.offset : ''}`, code: r.code, reason: r.detail })),
    );
  });

  it('reads a record that starts with a byte-order mark', async () => {
    const report = await s.pipeline.ingest(
      [{ value: `\uFEFF${JSON.stringify({ ...good(), signature: '9'.repeat(88) })}`, position: { topic: 'topic', partition: 0, offset: '43' } }],
      'test',
    );
    expect(report).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
  });

  it('rejects an oversized record without reading it', async () => {
    const huge = JSON.stringify({ ...good(), raw_data: 'x'.repeat(300_000) });
    const report = await s.pipeline.ingest([{ value: huge, position: { line: 1 } }], 'test');
    expect(report.accepted).toBe(0);
    expect(report.rejected[0]).toMatchObject({ code: 'oversized', detail: expect.stringMatching(/^record is \d+ bytes; the limit is 262144$/) });
  });
});

describe('a write that fails while the call is still parsing', () => {
  it("fails the call with the full-disk error, and no chunk's failure escapes as an unhandled rejection (which ends the process)", async () => {
    const { IngestPipeline } = await import('../../ingest/pipeline.ts');
    const { createLogger } = await import('../../core/logger.ts');
    const { ClickHouseCode, WarehouseError } = await import('../../warehouse/warehouse.ts');
    // The store refuses every insert as a full disk does; everything else is the real engine.
    const full = new Proxy(s.wh, {
      get(target, prop, receiver) {
        if (prop === 'insertBytes' || prop === 'insert') {
          // After a turn of the event loop, as a real insert answers: the call is still parsing then.
          return async () => {
            await new Promise((r) => setTimeout(r, 1));
            throw new WarehouseError('Cannot reserve 2.08 MiB, not enough space. (NOT_ENOUGH_SPACE)', ClickHouseCode.NOT_ENOUGH_SPACE);
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    // Small batches: chunks are handed to the writer (and fail) while later records still parse.
    const pipeline = new IngestPipeline(full, s.registry, s.dataVersion, createLogger('silent'), {
      maxRecordBytes: 1 << 20,
      batchRows: 50,
      writerId: 'full-disk-test',
    });
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const lines = (await demoRecords(s, 20_000)).map((r, i) => ({
        value: JSON.stringify({ ...r, signature: `${r.signature.slice(0, 60)}fd${i}` }),
        position: { line: i + 1 },
      }));
      await expect(pipeline.ingest(lines, 'test')).rejects.toMatchObject({ message: expect.stringMatching(/out of disk space/) });
      // Node reports an unhandled rejection after the microtask queue drains: give it turns.
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});
