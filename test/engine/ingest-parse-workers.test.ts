// Parse workers (INGEST_PARSE_WORKERS, ingest/parse-pool.ts): records parsed and checked on
// worker threads give exactly what parsing on the main thread gives: the same report
// (accepted, duplicates, every rejection's code, message and position), the same dead
// letters, and the same bytes handed to the engine, whether the records come as NDJSON
// lines (strings) or Kafka buffers, as received or re-serialised. A worker that cannot start,
// or dies on a chunk, costs only speed: its records are parsed on the main thread.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { IngestPipeline, type RawRecord } from '../../ingest/pipeline.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  s = await startServices();
});
afterAll(async () => s.cleanup());

const PROGRAM = 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc';
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const sigOf = (n: number): string => {
  let out = '';
  for (let v = n + 1; v > 0; v = Math.floor(v / 58)) out += ALPHABET[v % 58];
  return `${out.padEnd(87, '2')}a`;
};
const base = (n: number): Record<string, unknown> => ({
  signature: sigOf(n),
  slot: 300_000_000 + n,
  block_time: 1_735_600_000 + n,
  program_id: PROGRAM,
  protocol_name: 'whirlpool',
  instruction_type: 'swap',
  fee: 5000,
  compute_units: 60_000,
  accounts: ['EfUr3UvsoY9EdC7QTaBRqhtyFbrLnBd2fDwkYhHXFvcN', PROGRAM],
  accounts_count: 2,
  success: true,
});

/** 4,500 lines: mostly canonical records, with every kind of normalisation, refusal and repeat among them. */
function lines(offset: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 4500; i++) {
    const n = offset + i;
    const r = base(n);
    switch (i % 50) {
      case 1:
        out.push(JSON.stringify({ ...r, log_messages: ['a', 'b "c"'] }));
        break;
      case 2:
        out.push(JSON.stringify({ ...r, accounts_count: undefined }));
        break;
      case 3:
        out.push(JSON.stringify({ ...r, slot: String(r.slot) }));
        break;
      case 4:
        out.push(JSON.stringify(r).replace(`"slot":${String(r.slot)}`, '"slot":9007199254740993'));
        break;
      case 5:
        out.push(`\uFEFF${JSON.stringify(r)}`);
        break;
      case 6:
        out.push('{"signature": oops');
        break;
      case 7:
        out.push('[1, 2]');
        break;
      case 8:
        out.push(JSON.stringify({ ...r, fee: -1 }));
        break;
      case 9:
        out.push(JSON.stringify({ ...r, protocol_name: 'nope' }));
        break;
      case 10:
        out.push(JSON.stringify({ ...r, program_id: 'EfUr3UvsoY9EdC7QTaBRqhtyFbrLnBd2fDwkYhHXFvcN' }));
        break;
      case 11:
        out.push(JSON.stringify({ ...r, accounts: undefined, accounts_count: undefined }));
        break;
      case 12:
        out.push(JSON.stringify({ ...r, slot: '99999999999999999999' }));
        break;
      case 13:
        out.push(JSON.stringify({ ...r, raw_data: 'x'.repeat(70_000) }));
        break;
      // the same identity as the record before: a repeat within the call
      case 14:
        out.push(JSON.stringify(base(n - 1)));
        break;
      case 15:
        out.push(JSON.stringify({ ...r, instruction_index: 7, error_message: 'é \u2028 \ud83d\ude00' }));
        break;
      default:
        out.push(JSON.stringify(r));
    }
  }
  return out;
}

const asText = (ls: string[]): RawRecord[] => ls.map((value, i) => ({ value, position: { line: i + 1 } }));
const asBuffers = (ls: string[]): RawRecord[] => ls.map((t, i) => ({ value: Buffer.from(t), position: { topic: 't', partition: 0, offset: String(i) } }));

/** The warehouse as the pipeline sees it, with the base-table inserts and dead letters captured and not stored (so every run sees the same empty store). */
function capturing(wh: Warehouse, out: { payloads: string[]; dead: unknown[] }): Warehouse {
  return new Proxy(wh, {
    get(target, prop, receiver) {
      if (prop === 'insertBytes') {
        return async (table: string, data: Uint8Array, format: string, options: unknown) => {
          if (table === 'transactions') out.payloads.push(Buffer.from(data).toString('utf8'));
          else await target.insertBytes(table, data, format, options as never);
        };
      }
      if (prop === 'insert') {
        return async (table: string, rows: unknown[], options: unknown) => {
          if (table === 'dead_letters') out.dead.push(...rows);
          else await target.insert(table, rows as never, options as never);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function whenReady(p: IngestPipeline, want: number): Promise<void> {
  await p.prepare();
  const until = Date.now() + 60_000;
  while (p.parseWorkersReady < want) {
    if (Date.now() > until) throw new Error('parse workers did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function run(workers: number, records: RawRecord[], rawInsert: boolean, entry?: URL) {
  const out = { payloads: [] as string[], dead: [] as unknown[] };
  const p = new IngestPipeline(capturing(s.wh, out), s.registry, s.dataVersion, createLogger('silent'), {
    maxRecordBytes: 65_536,
    batchRows: 1000,
    writerId: `workers-${workers}`,
    rawInsert,
    parseWorkers: workers,
    parseWorkerEntry: entry,
  });
  try {
    if (workers > 0 && entry === undefined) await whenReady(p, workers);
    else await p.prepare();
    const report = await p.ingest(records, 'test');
    return { report, out, ready: p.parseWorkersReady, onWorkers: p.recordsParsedOnWorkers };
  } finally {
    await p.close();
  }
}

it('gives the same report, dead letters and engine bytes on workers as on the main thread', async () => {
  const ls = lines(0);
  for (const records of [asText(ls), asBuffers(ls)]) {
    for (const rawInsert of [true, false]) {
      const inThread = await run(0, records, rawInsert);
      const onWorkers = await run(2, records, rawInsert);
      expect(onWorkers.ready).toBe(2);
      expect(onWorkers.onWorkers).toBe(records.length);
      expect(inThread.report.rejected.length).toBeGreaterThan(0);
      expect(new Set(inThread.report.rejected.map((r) => r.code))).toEqual(
        new Set(['not_json', 'not_object', 'schema', 'unknown_protocol', 'program_unregistered', 'accounts_count_missing', 'slot_out_of_range', 'oversized']),
      );
      expect(inThread.report.duplicates).toBeGreaterThan(0);
      expect(onWorkers.report).toEqual(inThread.report);
      expect(onWorkers.out.dead).toEqual(inThread.out.dead);
      expect(onWorkers.out.payloads.join('')).toBe(inThread.out.payloads.join(''));
      expect(onWorkers.out.payloads.join('').length).toBeGreaterThan(1_000_000);
    }
  }
});

it('parses on the main thread when a worker cannot start or dies on a chunk, with the same results', async () => {
  const records = asText(lines(10_000));
  const expected = await run(0, records, true);
  const cannotStart = await run(2, records, true, new URL('../support/parse-worker-fails.ts', import.meta.url));
  expect(cannotStart.ready).toBe(0);
  expect(cannotStart.onWorkers).toBe(0);
  expect(cannotStart.report).toEqual(expected.report);
  expect(cannotStart.out.payloads.join('')).toBe(expected.out.payloads.join(''));

  const out = { payloads: [] as string[], dead: [] as unknown[] };
  const p = new IngestPipeline(capturing(s.wh, out), s.registry, s.dataVersion, createLogger('silent'), {
    maxRecordBytes: 65_536,
    batchRows: 1000,
    writerId: 'crashing',
    parseWorkers: 1,
    parseWorkerEntry: new URL('../support/parse-worker-crashes.ts', import.meta.url),
  });
  await whenReady(p, 1);
  expect(await p.ingest(records, 'test')).toEqual(expected.report);
  expect(p.parseWorkersReady).toBe(0);
  expect(p.recordsParsedOnWorkers).toBe(0);
  expect(out.payloads.join('')).toBe(expected.out.payloads.join(''));
  expect(out.dead).toEqual(expected.out.dead);
  await p.close();
});

it('stores through workers into the real store, the engine-refused batch retried re-serialised', async () => {
  const p = new IngestPipeline(s.wh, s.registry, s.dataVersion, createLogger('silent'), {
    maxRecordBytes: 65_536,
    batchRows: 5000,
    writerId: 'workers-store',
    parseWorkers: 2,
  });
  await whenReady(p, 2);
  const ls = Array.from({ length: 3000 }, (_, i) => JSON.stringify(base(50_000 + i)));
  // valid JSON the engine's reader refuses: its batch goes again, every row rebuilt from its line
  ls[2500] = ls[2500]!.replace('"fee":5000', '"fee":5e3');
  expect(await p.ingest(asBuffers(ls), 'test')).toEqual({ accepted: 3000, duplicates: 0, rejected: [] });
  expect(p.recordsParsedOnWorkers).toBe(3000);
  expect(await p.ingest(asText(ls), 'test')).toEqual({ accepted: 0, duplicates: 3000, rejected: [] });
  const [row] = await s.wh.query<{ n: string; fee: string }>(`SELECT count() AS n, sum(fee) AS fee FROM transactions WHERE signature IN {s:Array(String)}`, {
    params: { s: ls.map((_, i) => sigOf(50_000 + i)) },
  });
  expect(row).toEqual({ n: '3000', fee: String(3000 * 5000) });
  await p.close();
});
