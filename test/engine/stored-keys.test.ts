// De-duplication against the store asks the engine per batch (issue 40: ingest_keys, ordered
// by time, then tx_rid_by_sig → tx_by_rid by signature for what it matched); the process keeps no
// state of the store. It must never call a stored record new: these tests store records
// through writers this pipeline did not hear from (another pipeline over another handle of
// the same warehouse, a bare INSERT) after it started, and check the replay is still a
// duplicate everywhere. And sig_key computed in JS must be the engine's cityHash64.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { cityHash64 } from '../../ingest/city-hash.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { BASE_COLUMNS } from '../../warehouse/tables.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { demoRecords, tableCounts } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
let records: IngestRecord[];
beforeAll(async () => {
  s = await startServices();
  records = await demoRecords(s, 3000, 11);
});
afterAll(async () => s.cleanup());

/** Another handle on the same warehouse: a pipeline over it hears nothing from the first one. */
function otherHandle(wh: Warehouse): Warehouse {
  return new Proxy(wh, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A handle that records every signature the de-duplication compares in the signature table. */
function lookups(wh: Warehouse, asked: string[]): Warehouse {
  return new Proxy(wh, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (sql: string, options?: { params?: Record<string, unknown> }) => {
          if (sql.includes('WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))')) asked.push(...(options!.params!.sigs as string[]));
          return target.query(sql, options as never);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const pipelineOver = (wh: Warehouse, writerId: string): IngestPipeline =>
  new IngestPipeline(wh, s.registry, s.dataVersion, createLogger('silent'), { maxRecordBytes: s.config.ingest.maxRecordBytes, batchRows: 500, writerId });
const asRaw = (rs: readonly object[]) => rs.map((value, i) => ({ value: JSON.stringify(value), position: { line: i + 1 } }));

describe('de-duplication against the store', () => {
  it('computes sig_key as the engine does (cityHash64), for every length 0-300', async () => {
    const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyzé€😀';
    const strings: string[] = [];
    let x = 12345;
    for (let n = 0; n <= 300; n++) {
      let t = '';
      for (let i = 0; i < n; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        t += alphabet[x % alphabet.length];
      }
      strings.push(t);
    }
    strings.push(...records.slice(0, 50).map((r) => r.signature));
    const rows = await s.wh.query<{ h: string }>('SELECT toString(cityHash64(arrayJoin({s:Array(String)}))) AS h', { params: { s: strings } });
    expect(rows.map((r) => r.h)).toEqual(strings.map((t) => cityHash64(t).toString()));
  });

  it('de-duplicates a record stored by another pipeline after this one started', async () => {
    const mine = pipelineOver(s.wh, 'writer-a');
    // Started now (the store holds none of these records yet), before the other writer stores.
    await mine.prepare();
    const theirs = pipelineOver(otherHandle(s.wh), 'writer-b');
    const first = records.slice(0, 1000);
    expect((await theirs.ingest(asRaw(first), 'test')).accepted).toBe(first.length);
    const before = await tableCounts(s);

    // A batch mixing records the other writer stored with new ones.
    const fresh = records.slice(1000, 1200);
    const report = await mine.ingest(asRaw([...first.slice(0, 300), ...fresh]), 'test');
    expect(report).toMatchObject({ accepted: fresh.length, duplicates: 300, rejected: [] });
    const after = await tableCounts(s);
    expect(after.transactions).toBe(before.transactions + fresh.length);
    expect(after.tx_rid_by_sig).toBe(after.transactions);
    expect(after.protocol_hourly).toBe(after.transactions);
  });

  it('de-duplicates a record written by a bare INSERT that bypassed every pipeline', async () => {
    const mine = pipelineOver(s.wh, 'writer-a');
    await mine.prepare();
    const outside = records.slice(1500, 1510).map((r) => ({
      ...r,
      instruction_index: r.instruction_index ?? 0,
      accounts: r.accounts ?? [],
      accounts_count: r.accounts_count ?? (r.accounts ?? []).length,
    }));
    await s.wh.insert('transactions', outside, { columns: BASE_COLUMNS.filter((c) => c in outside[0]!) });
    const report = await mine.ingest(asRaw(records.slice(1500, 1520)), 'test');
    expect(report).toMatchObject({ accepted: 10, duplicates: 10 });
    const counts = await tableCounts(s);
    expect(counts.tx_rid_by_sig).toBe(counts.transactions);
  });

  it('drops a replay of live records (one minute of block times: read by time range) and stores the new ones', async () => {
    const mine = pipelineOver(s.wh, 'writer-live');
    const minute = Math.floor(Date.now() / 1000) - 120;
    const live = records.slice(1600, 1800).map((r, i) => ({ ...r, block_time: minute + (i % 60) }));
    expect((await mine.ingest(asRaw(live.slice(0, 150)), 'test')).accepted).toBe(150);
    const before = await tableCounts(s);
    const report = await pipelineOver(otherHandle(s.wh), 'writer-live-2').ingest(asRaw(live), 'test');
    expect(report).toMatchObject({ accepted: 50, duplicates: 150, rejected: [] });
    const after = await tableCounts(s);
    expect(after.transactions).toBe(before.transactions + 50);
    expect(after.protocol_hourly).toBe(after.transactions);
  });

  it('compares by signature only the records the time-ordered keys matched', async () => {
    const asked: string[] = [];
    const mine = pipelineOver(lookups(s.wh, asked), 'writer-a');
    await mine.prepare();
    const batch = records.slice(2000, 3000);
    const report = await mine.ingest(asRaw([...batch, ...records.slice(0, 100)]), 'test');
    expect(report).toMatchObject({ accepted: batch.length, duplicates: 100 });
    // The 100 stored ones are compared; none of the 1000 new ones is (a new record matches a
    // stored (block_time, sig_key, instruction_index) only by a 64-bit hash collision).
    const askedSet = new Set(asked);
    for (const r of records.slice(0, 100)) expect(askedSet.has(r.signature)).toBe(true);
    expect(batch.filter((r) => askedSet.has(r.signature))).toEqual([]);
  });
});
