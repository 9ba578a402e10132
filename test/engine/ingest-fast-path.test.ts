// The ingest fast path (issue 15): records that need no normalising reach the engine as
// received; those that do are re-serialised from their normalised row. Either way the
// stored row must be exactly what the row path (every record re-serialised, as before)
// stores: checked column by column against a copy of the base table filled by that path.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import { checkRecord, protocolLookup } from '../../ingest/record-schema.ts';
import { BASE_COLUMNS } from '../../warehouse/tables.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  s = await startServices();
});
afterAll(async () => s.cleanup());

const sig = (c: string): string => `${c.repeat(87)}a`;
const base = (signature: string): Record<string, unknown> => ({
  signature,
  slot: 300_000_000,
  block_time: 1_735_600_000,
  program_id: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
  protocol_name: 'whirlpool',
  instruction_type: 'swap',
  fee: 5000,
  compute_units: 60_000,
  accounts: ['EfUr3UvsoY9EdC7QTaBRqhtyFbrLnBd2fDwkYhHXFvcN', 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc'],
  accounts_count: 2,
  success: true,
  transaction_index: signature.charCodeAt(0),
});

// Each entry: the record's text as a producer sends it, and whether it can go as received.
const CASES: { text: string; raw: boolean }[] = [
  { text: JSON.stringify(base(sig('2'))), raw: true },
  // a decimal-string slot (the engine reads it as the row path writes it), also at the record id's top
  { text: JSON.stringify({ ...base(sig('3')), slot: '300000001' }), raw: true },
  { text: JSON.stringify({ ...base(sig('4')), slot: '17179869182' }), raw: true },
  // log lines as an array: joined with newlines, so re-serialised
  {
    text: JSON.stringify({ ...base(sig('5')), success: false, error_message: 'failed: é \u2028', log_messages: ['Program log: a', 'Program log: "b"'] }),
    raw: false,
  },
  // accounts_count missing: the length of accounts, so re-serialised
  { text: JSON.stringify({ ...base(sig('6')), accounts_count: undefined }), raw: false },
  // optional fields absent and keys the base table does not take (date is derived, never sent)
  {
    text: JSON.stringify({
      signature: sig('7'),
      instruction_index: 3,
      slot: 1,
      block_time: 1_735_600_100,
      program_id: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
      protocol_name: 'whirlpool',
      instruction_type: 'swap',
      fee: 0,
      compute_units: 0,
      accounts_count: 0,
      success: true,
      date: '2001-01-01',
      extra: { a: [1] },
      transaction_index: 7,
    }),
    raw: true,
  },
  // no transaction_index: the writer adds its counted position (ingest/record-id.ts), so re-serialised
  { text: JSON.stringify({ ...base(sig('8')), transaction_index: undefined }), raw: false },
  // escapes and whitespace as a producer may write them
  {
    text: ` { "signature" : "${sig('9')}", "slot": 1, "block_time": 1735600200, "program_id": "whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc", "protocol_name": "whirlpool", "instruction_type": "sw\\u0061p", "fee": 1, "compute_units": 2, "accounts_count": 1, "success": false, "error_message": "tab\\there \\ud83d\\ude00", "transaction_index": 9 } `,
    raw: true,
  },
];
// Valid JSON the engine's reader refuses (a number written 5e3, a repeated key): the batch
// is retried re-serialised and still stores what the row path stores.
const REFUSED = [JSON.stringify(base(sig('A'))).replace('"fee":5000', '"fee":5e3'), JSON.stringify(base(sig('B'))).replace('"fee":5000', '"fee":1,"fee":7')];

function recording(wh: Warehouse, payloads: string[]): Warehouse {
  return new Proxy(wh, {
    get(target, prop, receiver) {
      if (prop === 'insertBytes') {
        return (table: string, data: Uint8Array, format: string, options: unknown) => {
          if (table === 'transactions') payloads.push(Buffer.from(data).toString('utf8'));
          return target.insertBytes(table, data, format, options as never);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

// transaction_index is not stored (it becomes part of rid, which the row path's copy computes
// without the writer's counted position): every other column.
const COLS = [...BASE_COLUMNS.filter((c) => c !== 'slot' && c !== 'transaction_index'), 'toString(slot) AS slot', 'date', 'hour', 'day_of_week'].join(', ');

it('stores every record exactly as the row path does, passing the canonical ones through as received', async () => {
  const payloads: string[] = [];
  const pipeline = new IngestPipeline(recording(s.wh, payloads), s.registry, s.dataVersion, createLogger('silent'), {
    maxRecordBytes: s.config.ingest.maxRecordBytes,
    batchRows: 100,
    writerId: 'fast-path-test',
  });
  const lines = [...CASES.map((c) => c.text), ...REFUSED];
  // As Kafka hands them (buffers, one with a byte-order mark) and as NDJSON lines (strings).
  const asBuffers = lines
    .slice(0, 4)
    .map((t, i) => ({ value: Buffer.from(i === 0 ? `\uFEFF${t}` : t), position: { topic: 't', partition: 0, offset: String(i) } }));
  const asText = lines.slice(4, CASES.length).map((t, i) => ({ value: t, position: { line: i + 1 } }));
  expect(await pipeline.ingest([...asBuffers, ...asText], 'test')).toEqual({ accepted: CASES.length, duplicates: 0, rejected: [] });
  expect(
    await pipeline.ingest(
      REFUSED.map((t, i) => ({ value: t, position: { line: i + 1 } })),
      'test',
    ),
  ).toEqual({ accepted: REFUSED.length, duplicates: 0, rejected: [] });

  // Which went as received: the first batch's buffer holds those lines verbatim.
  for (const c of CASES) expect(payloads[0]!.includes(c.text.trim())).toBe(c.raw);

  // The row path, as before: normalised rows as JSON objects into a copy of the base table.
  const known = protocolLookup(await s.registry.list());
  const rows = lines.map((t) => {
    const check = checkRecord(JSON.parse(t), known);
    if (!check.ok) throw new Error(check.detail);
    return check.row;
  });
  await s.wh.exec('CREATE TABLE expected_rows AS transactions');
  await s.wh.insert('expected_rows', rows, { columns: BASE_COLUMNS });
  const read = (table: string) => s.wh.query(`SELECT ${COLS} FROM ${table} ORDER BY signature, instruction_index`);
  const stored = await read('transactions');
  expect(stored).toHaveLength(lines.length);
  expect(stored).toEqual(await read('expected_rows'));
  // The normalisations themselves, spelled out.
  const bySig = new Map(stored.map((r) => [(r as { signature: string }).signature, r as Record<string, unknown>]));
  expect(bySig.get(sig('4'))!.slot).toBe('17179869182');
  expect(bySig.get(sig('5'))!.log_messages).toBe('Program log: a\nProgram log: "b"');
  expect(bySig.get(sig('6'))!.accounts_count).toBe(2);
  expect(bySig.get(sig('7'))!.date).not.toBe('2001-01-01');
  expect(bySig.get(sig('A'))!.fee).toBe('5000');
  expect(bySig.get(sig('B'))!.fee).toBe('7');
});
