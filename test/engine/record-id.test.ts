// The record id (issue 37): a record sent with transaction_index gets Solana's own position
// (slot, transaction index, instruction index) packed as core/limits/record-id.ts says; one
// sent without gets a per-slot counted position, shared by the instructions of one
// transaction, assigned once: replaying the same records (the same NDJSON lines sent again)
// stores each once with the same id, and so does a replay after the service restarts on the
// same data, whose counter continues after what is stored. Out-of-range parts are refused,
// and a producer cannot choose the id itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../api/server/services.ts';
import { loadConfig } from '../../core/config/load-config.ts';
import { createLogger } from '../../core/logger.ts';
import { packRid } from '../../ingest/record-id.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { ADMIN_TOKEN } from '../support/services.ts';
import { b58, FIXTURE_START, PROGRAM_OF } from '../support/fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'txa-rid-'));
const config = loadConfig({ DATA_DIR: dir, EXPORT_DIR: `${dir}-exports`, DEMO_ROWS: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent' });
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}-exports`, { recursive: true, force: true });
});

const GIVEN = 330_000_000;
const COUNTED = 330_000_001;

function rec(label: string, slot: number, ix: number, extra: Partial<IngestRecord> = {}): IngestRecord {
  return {
    signature: b58(label, 88),
    instruction_index: ix,
    slot,
    block_time: FIXTURE_START + 100,
    program_id: PROGRAM_OF.jupiter_v6!,
    protocol_name: 'jupiter_v6',
    instruction_type: 'route',
    fee: 5000,
    compute_units: 1000 + ix,
    accounts: [b58(`acct-${label}`, 44)],
    success: true,
    ...extra,
  };
}

/** As an NDJSON body carries them: one line a record. */
const lines = (rs: readonly object[]): string[] => rs.map((r) => JSON.stringify(r));

async function ingestLines(s: Services, rs: readonly object[]) {
  return s.pipeline.ingest(
    lines(rs).map((value, i) => ({ value, position: { line: i + 1 } })),
    'test',
  );
}

/** Every stored record's id, by "label-free" identity signature#instruction_index. */
async function ids(s: Services): Promise<Map<string, bigint>> {
  const rows = await s.wh.query<{ k: string; rid: string }>(
    "SELECT concat(signature, '#', toString(instruction_index)) AS k, toString(rid) AS rid FROM transactions",
  );
  return new Map(rows.map((r) => [r.k, BigInt(r.rid)]));
}

const key = (label: string, ix: number): string => `${b58(label, 88)}#${ix}`;

const given = [
  rec('g-a', GIVEN, 0, { transaction_index: 17 }),
  rec('g-a', GIVEN, 1, { transaction_index: 17 }),
  rec('g-b', GIVEN, 0, { transaction_index: 4 }),
  rec('g-c', GIVEN + 5, 3, { transaction_index: 65_535 }),
];
const firstCounted = [rec('c-a', COUNTED, 0), rec('c-b', COUNTED, 0), rec('c-a', COUNTED, 1)];
const secondCounted = [rec('c-c', COUNTED, 0), rec('c-a', COUNTED, 2)];

describe('record ids', () => {
  it('pack the sent transaction_index, count the others per slot, and do not change across replays and restarts', async () => {
    let s = await createServices(config, createLogger('silent'));
    let before: Map<string, bigint>;
    try {
      const first = await ingestLines(s, [...given, ...firstCounted]);
      expect(first).toMatchObject({ accepted: 7, duplicates: 0, rejected: [] });
      expect((await ingestLines(s, secondCounted)).accepted).toBe(2);
      before = await ids(s);
      // Sent: Solana's own position.
      for (const r of given)
        expect(before.get(key(r.signature === b58('g-a', 88) ? 'g-a' : r.signature === b58('g-b', 88) ? 'g-b' : 'g-c', r.instruction_index!))).toBe(
          packRid(BigInt(r.slot), r.transaction_index!, r.instruction_index!),
        );
      // Counted: from 65536 in order of first acceptance; a transaction's instructions share it,
      // also when a later batch brings another instruction of a stored transaction.
      const expected: [string, number, number][] = [
        ['c-a', 0, 65_536],
        ['c-b', 0, 65_537],
        ['c-a', 1, 65_536],
        ['c-c', 0, 65_538],
        ['c-a', 2, 65_536],
      ];
      for (const [label, ix, position] of expected) expect(before.get(key(label, ix))).toBe(packRid(BigInt(COUNTED), position, ix));
      expect(new Set(before.values()).size).toBe(before.size);
      // Every lookup table holds each id once.
      const [t] = await s.wh.query<{ r: string; a: string }>('SELECT (SELECT uniqExact(rid) FROM tx_by_rid) AS r, (SELECT count() FROM tx_by_rid) AS a');
      expect(t).toEqual({ r: String(before.size), a: String(before.size) });

      // Replayed (the same lines again, and shuffled): nothing new, the same ids.
      const replay = [...secondCounted, ...given, ...firstCounted].reverse();
      expect(await ingestLines(s, replay)).toMatchObject({ accepted: 0, duplicates: 9 });
      expect(await ids(s)).toEqual(before);
    } finally {
      await s.close();
    }

    // A restart on the same data: replays change nothing, the counter continues after the store.
    s = await createServices(config, createLogger('silent'));
    try {
      expect(await ingestLines(s, [...firstCounted, ...given])).toMatchObject({ accepted: 0, duplicates: 7 });
      expect(await ids(s)).toEqual(before);
      expect((await ingestLines(s, [rec('c-d', COUNTED, 0), rec('c-b', COUNTED, 4), rec('c-e', COUNTED + 1, 0)])).accepted).toBe(3);
      const after = await ids(s);
      for (const [k, v] of before) expect(after.get(k)).toBe(v);
      expect(after.get(key('c-d', 0))).toBe(packRid(BigInt(COUNTED), 65_539, 0));
      expect(after.get(key('c-b', 4))).toBe(packRid(BigInt(COUNTED), 65_537, 4));
      expect(after.get(key('c-e', 0))).toBe(packRid(BigInt(COUNTED + 1), 65_536, 0));
    } finally {
      await s.close();
    }
  });

  it('refuses parts the id cannot hold, and ignores an id a producer sends', async () => {
    const s = await createServices(config, createLogger('silent'));
    try {
      const refused = await ingestLines(s, [
        rec('big-slot', 17_179_869_183, 0, { transaction_index: 1 }),
        rec('big-ix', GIVEN, 8192, { transaction_index: 1 }),
        rec('big-tx', GIVEN, 0, { transaction_index: 65_536 }),
      ]);
      expect(refused.accepted).toBe(0);
      expect(refused.rejected.map((r) => r.code)).toEqual(['slot_out_of_range', 'schema', 'schema']);
      // The largest slot that fits is taken.
      expect((await ingestLines(s, [rec('top-slot', 17_179_869_182, 8191, { transaction_index: 65_535 })])).accepted).toBe(1);
      // A line that names rid (kept as received: it carries transaction_index) stores the computed id.
      expect((await ingestLines(s, [{ ...rec('forged', GIVEN + 9, 0, { transaction_index: 3 }), rid: 1 }])).accepted).toBe(1);
      const got = await ids(s);
      expect(got.get(key('forged', 0))).toBe(packRid(BigInt(GIVEN + 9), 3, 0));
      expect(got.get(key('top-slot', 8191))).toBe(packRid(17_179_869_182n, 65_535, 8191));
    } finally {
      await s.close();
    }
  });
});
