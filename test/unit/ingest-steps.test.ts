// The ingest step contract (ingest/steps/step.ts), without an engine: a step's ok passes its
// value to the next step, a drop is counted with its code, a dead-letter reaches the
// dead-letter sink with its code and reason; and through the whole pipeline over a fake
// store, each kind ends where it should (the insert, the report's duplicates, the
// dead-letter table).
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { cityHash64, cityHasher } from '../../ingest/city-hash.ts';
import { IngestPipeline, type RawRecord } from '../../ingest/pipeline.ts';
import { parseRecord, type RecordContext } from '../../ingest/parse-record.ts';
import { protocolLookup } from '../../ingest/record-schema.ts';
import { DeadLetters } from '../../ingest/steps/dead-letter.ts';
import { dedupeInBatch, StoreDedupe } from '../../ingest/steps/dedupe.ts';
import type { Accepted } from '../../ingest/steps/records.ts';
import { parseCall } from '../../ingest/steps/parse-call.ts';
import { drop, ok, runBatchSteps, type BatchStep, type DropCode, type StepSink } from '../../ingest/steps/step.ts';
import { DataVersion } from '../../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../../warehouse/protocol-registry.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';

const PROGRAM = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';
const OTHER_PROGRAM = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const ENTRIES = [
  { protocolName: 'whirlpool', programId: PROGRAM },
  { protocolName: 'jupiter', programId: OTHER_PROGRAM },
];
const sig = (c: string): string => `${c.repeat(87)}a`;
const good = (signature: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  signature,
  slot: 300_000_000,
  block_time: 1_735_600_000,
  program_id: PROGRAM,
  protocol_name: 'whirlpool',
  instruction_type: 'swap',
  fee: 5000,
  compute_units: 60_000,
  accounts: [PROGRAM],
  accounts_count: 1,
  success: true,
  transaction_index: 0,
  ...extra,
});

/** A sink that records what reached it. */
function recordingSink<T>(): Pick<StepSink<T>, 'drop'> & { dropped: [T, DropCode][] } {
  const dropped: [T, DropCode][] = [];
  return { dropped, drop: (item, code) => void dropped.push([item, code]) };
}

describe('step results reach their sink', () => {
  it('record steps: ok goes on as an accepted record, dead-letter reaches the sink with its code and reason, in order', async () => {
    const ctx: RecordContext = { maxRecordBytes: 2000, known: protocolLookup(ENTRIES), hasher: cityHasher() };
    const records: RawRecord[] = ['{"x":', JSON.stringify(good(sig('4'))), '[]'].map((value, i) => ({ value, position: { line: i + 1 } }));
    const seen: string[] = [];
    await parseCall(records, ctx, ENTRIES, undefined, {
      ok: (a) => void seen.push(`ok ${a.signature === sig('4')}`),
      deadLetter: (rec, code, reason) => void seen.push(`dead ${JSON.stringify(rec.position)} ${code} ${reason.length > 0}`),
      stopped: () => false,
      writing: () => false,
      parsedOnWorkers: () => undefined,
    });
    expect(seen).toEqual(['dead {"line":1} not_json true', 'ok true', 'dead {"line":3} not_object true']);
  });

  it('runBatchSteps: each step sees only what the one before passed on; drops are counted with their code', async () => {
    const seenBySecond: number[][] = [];
    const odd: BatchStep<number> = (xs) => xs.map((x) => (x % 2 === 1 ? drop('duplicate_in_batch') : ok(x)));
    const big: BatchStep<number> = async (xs) => {
      seenBySecond.push([...xs]);
      return xs.map((x) => (x > 4 ? drop('already_stored') : ok(x)));
    };
    const sink = recordingSink<number>();
    expect(await runBatchSteps([1, 2, 3, 4, 5, 6], [odd, big], sink)).toEqual([2, 4]);
    expect(seenBySecond).toEqual([[2, 4, 6]]);
    expect(sink.dropped).toEqual([
      [1, 'duplicate_in_batch'],
      [3, 'duplicate_in_batch'],
      [5, 'duplicate_in_batch'],
      [6, 'already_stored'],
    ]);
  });
});

describe('the record steps', () => {
  const ctx: RecordContext = { maxRecordBytes: 2000, known: protocolLookup(ENTRIES), hasher: cityHasher() };
  const text = (r: Record<string, unknown>): string => JSON.stringify(r);

  it('answer one code per step, in step order', () => {
    const cases: [string | object, string][] = [
      ['x'.repeat(2001), 'oversized'],
      ['{"signature":', 'not_json'],
      ['[1]', 'not_object'],
      [text(good(sig('2'), { fee: -1 })), 'schema'],
      [text(good(sig('2'), { protocol_name: 'nope' })), 'unknown_protocol'],
      [text(good(sig('2'), { program_id: 'Stake11111111111111111111111111111111111111' })), 'program_unregistered'],
      [text(good(sig('2'), { program_id: OTHER_PROGRAM })), 'program_mismatch'],
      [text(good(sig('2'), { accounts: undefined, accounts_count: undefined })), 'accounts_count_missing'],
      [text(good(sig('2'), { slot: '99999999999999999999' })), 'slot_out_of_range'],
      // The earliest step decides: an unknown protocol that also lacks accounts_count.
      [text(good(sig('2'), { protocol_name: 'nope', accounts: undefined, accounts_count: undefined })), 'unknown_protocol'],
    ];
    for (const [value, code] of cases) {
      const r = parseRecord(value, ctx);
      expect(r.kind, code).toBe('dead-letter');
      if (r.kind === 'dead-letter') {
        expect(r.code).toBe(code);
        expect(r.reason.length).toBeGreaterThan(0);
      }
    }
  });

  it('pass a good record on with its row, whether it stores as received, and its sig_key', () => {
    const r = parseRecord(`\uFEFF${text(good(sig('3')))}`, ctx);
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    expect(r.value.row).toMatchObject({ signature: sig('3'), instruction_index: 0, slot: '300000000', accounts_count: 1 });
    expect(r.value.asReceived).toBe(true);
    expect((BigInt(r.value.kh) << 32n) | BigInt(r.value.kl)).toBe(cityHash64(sig('3')));
    const logs = parseRecord(good(sig('3'), { log_messages: ['a', 'b'] }), ctx);
    expect(logs).toMatchObject({ kind: 'ok', value: { asReceived: false, row: { log_messages: 'a\nb' } } });
  });

  it('dead letters keep code, reason, position and the record', () => {
    const sink = new DeadLetters();
    sink.deadLetter({ value: 'not json', position: { line: 7 } }, 'not_json', 'not valid JSON: x');
    expect(sink.count).toBe(1);
    expect(sink.rejections()).toEqual([{ code: 'not_json', detail: 'not valid JSON: x', position: { line: 7 } }]);
  });
});

describe('the writer steps', () => {
  const accepted = (signature: string, ix: number): Accepted => ({ signature, instruction_index: ix, protocol_name: 'whirlpool', block_time: 1, kh: 0, kl: 0 });

  it('dedupe in batch: the first occurrence of an identity goes on, a repeat is dropped', () => {
    const batch = [accepted('a', 0), accepted('a', 1), accepted('a', 0), accepted('b', 0), accepted('a', 1)];
    expect(dedupeInBatch(batch).map((r) => (r.kind === 'ok' ? 'ok' : r.code))).toEqual(['ok', 'ok', 'duplicate_in_batch', 'ok', 'duplicate_in_batch']);
  });

  it('dedupe against the store: an identity the store holds is dropped already_stored', async () => {
    const store = fakeStore([{ signature: 'a', instruction_index: 1 }]);
    const results = await new StoreDedupe(store.wh).step([accepted('a', 0), accepted('a', 1), accepted('b', 0)]);
    expect(results.map((r) => (r.kind === 'ok' ? 'ok' : r.code))).toEqual(['ok', 'already_stored', 'ok']);
  });
});

describe('the pipeline routes each kind of result', () => {
  it('ok to the insert, drops to the duplicates count, dead letters to the dead-letter table and the report', async () => {
    const store = fakeStore([{ signature: sig('S'), instruction_index: 0 }]);
    const registry = { list: async () => ENTRIES } as unknown as ProtocolRegistry;
    const pipeline = new IngestPipeline(store.wh, registry, new DataVersion(), createLogger('silent'), { maxRecordBytes: 4096, batchRows: 100 });
    const records: RawRecord[] = [good(sig('N')), good(sig('N')), good(sig('S')), good(sig('M')), good(sig('X'), { protocol_name: 'nope' })].map((r, i) => ({
      value: JSON.stringify(r),
      position: { line: i + 1 },
    }));
    records.push({ value: '{oops', position: { line: 6 } });
    const report = await pipeline.ingest(records, 'unit');
    // N twice (one dropped in batch), S already stored: 2 stored, 2 dropped.
    expect(report.accepted).toBe(2);
    expect(report.duplicates).toBe(2);
    expect(report.rejected.map((r) => [r.code, r.position])).toEqual([
      ['unknown_protocol', { line: 5 }],
      ['not_json', { line: 6 }],
    ]);
    expect(store.inserted.map((line) => (JSON.parse(line) as { signature: string }).signature)).toEqual([sig('N'), sig('M')]);
    expect(store.deadLetters).toEqual([
      { source: 'unit', position: 'line 5', code: 'unknown_protocol', reason: report.rejected[0]!.detail, payload: records[4]!.value },
      { source: 'unit', position: 'line 6', code: 'not_json', reason: report.rejected[1]!.detail, payload: '{oops' },
    ]);
  });
});

/** A store in memory: the stored identities the de-duplication read returns, and what was written. */
function fakeStore(stored: { signature: string; instruction_index: number }[]) {
  const inserted: string[] = [];
  const deadLetters: object[] = [];
  const wh = {
    transport: 'embedded',
    query: async (_sql: string, options?: { params?: { sigs?: string[] } }) => {
      const sigs = options?.params?.sigs;
      return sigs === undefined ? [] : stored.filter((s) => sigs.includes(s.signature));
    },
    // The time-ordered key read (ingest_keys): every asked key "matches" at every stored
    // instruction index, so the comparison by signature above is what decides.
    queryText: async (_sql: string, _format: string, options?: { params?: { t?: number[]; h?: number[]; l?: number[] } }) => {
      const p = options?.params;
      if (p?.t === undefined) return '';
      const ixs = [...new Set(stored.map((s) => s.instruction_index))];
      return p.t.flatMap((t, i) => ixs.map((ix) => `${t}\t${p.h![i]}\t${p.l![i]}\t${ix}\n`)).join('');
    },
    insert: async (table: string, rows: object[]) => {
      if (table === 'dead_letters') deadLetters.push(...rows);
    },
    insertBytes: async (_table: string, data: Uint8Array) => {
      inserted.push(
        ...Buffer.from(data)
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
    },
  } as unknown as Warehouse;
  return { wh, inserted, deadLetters };
}
