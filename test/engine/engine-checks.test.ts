// Checks in the engine (issue 40, migration 121): an NDJSON body's lines are checked by SQL.
// They must answer every line as the JavaScript checks do (the same code and message), or
// defer it to them; store the very rows the JavaScript path would build; and keep ingest's
// exactly-once guarantees (a replay, a line repeated in the body, a deferred line repeating
// an engine-checked one: each identity stored once, in the base table and every view).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { cityHasher } from '../../ingest/city-hash.ts';
import { IngestJournal } from '../../ingest/ingest-journal.ts';
import { IngestPipeline, type IngestReport } from '../../ingest/pipeline.ts';
import { recordsBody } from '../../ingest/engine-ingest.ts';
import { EngineChecks } from '../../ingest/engine-checks.ts';
import { packRid, unpackRid } from '../../ingest/record-id.ts';
import { FIRST_COUNTED_POSITION, MAX_INSTRUCTION_INDEX, MAX_RID_SLOT, MAX_TRANSACTION_INDEX } from '../../core/limits/record-id.ts';
import { ndjsonRecords } from '../../ingest/ndjson.ts';
import { parseRecord } from '../../ingest/parse-record.ts';
import { protocolLookup } from '../../ingest/record-schema.ts';
import { MIGRATIONS_DIR } from '../../warehouse/migrate.ts';
import { BASE_COLUMNS, TABLES } from '../../warehouse/tables.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';
import { demoRecords, tableCounts } from '../support/fixtures.ts';
import { recordVariants } from '../support/record-variants.ts';
import { startServices } from '../support/services.ts';

type Case = { name: string; line?: string; lineBase64?: string; record?: Record<string, unknown>; padRawData?: number };
const corpus = (JSON.parse(readFileSync(new URL('../fixtures/hostile-ingest.json', import.meta.url), 'utf8')) as { lines: Case[] }).lines;
const lineOf = (c: Case): Buffer =>
  c.lineBase64 !== undefined
    ? Buffer.from(c.lineBase64, 'base64')
    : c.record !== undefined
      ? Buffer.from(JSON.stringify({ ...c.record, raw_data: 'x'.repeat(c.padRawData ?? 0) }))
      : Buffer.from(c.line ?? '');
/** A valid record that carries its transaction_index: the engine decides it whole (one without
 *  is deferred, its record id's counted position assigned by the writer: ingest/record-id.ts). */
const valid = {
  ...(JSON.parse(corpus.find((c) => c.name === 'CRLF line ending')!.line!.replace(/\r$/, '')) as Record<string, unknown>),
  transaction_index: 7,
};
/** The hostile corpus, then the variants of a valid record, as one body. */
const body = (prefix: string): Buffer =>
  Buffer.concat([
    ...corpus.flatMap((c, i) => (i === 0 ? [lineOf(c)] : [Buffer.from('\n'), lineOf(c)])),
    Buffer.from(`\n${recordVariants(valid, prefix).join('\n')}\n`),
    Buffer.from(`${idBounds(prefix).join('\n')}\n`),
  ]);
/** Records at and past the record id's bounds (migration 110): slot, instruction and transaction index. */
const idBounds = (prefix: string): string[] =>
  [
    { slot: String(MAX_RID_SLOT) },
    { slot: String(MAX_RID_SLOT + 1n) },
    { slot: Number(MAX_RID_SLOT + 1n) },
    { slot: 2 ** 60 },
    { slot: '18446744073709551615' },
    { instruction_index: MAX_INSTRUCTION_INDEX },
    { instruction_index: MAX_INSTRUCTION_INDEX + 1 },
    { transaction_index: MAX_TRANSACTION_INDEX },
    { transaction_index: MAX_TRANSACTION_INDEX + 1 },
    { transaction_index: -1 },
    { transaction_index: 1.5 },
  ].map((change, i) => JSON.stringify({ ...valid, signature: `${prefix}B${'abcdefghijk'[i]}`.padEnd(86, 'z'), ...change }));

/** Lines aimed at the common-case tests of migration 122: numbers in every form JSON allows, the
 *  accounts' array in any layout and at its bounds, CR and byte-order marks, the free text. */
const ADDRESS = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const fastPathLines = (prefix: string): string[] => {
  const sig = (i: number) => `${prefix}${i.toString(36)}`.padEnd(88, 'z');
  // The valid record with one field's JSON text replaced (raw: as written, not as JSON.stringify writes it).
  const line = (i: number, field: string, raw: string) => JSON.stringify({ ...valid, signature: sig(i), [field]: '@raw' }).replace('"@raw"', raw);
  const many = (n: number, sep: string) => `[${Array.from({ length: n }, () => JSON.stringify(ADDRESS)).join(sep)}]`;
  const numbers = ['1.0', '1e3', '1E3', '-0', '0.0', '00', '5000.0', '1.5e1', '18446744073709551616', '9007199254740993', '4294967296', '65536', '8192'];
  const integers = ['fee', 'compute_units', 'block_time', 'slot', 'instruction_index', 'transaction_index', 'accounts_count'];
  const accounts = [many(0, ','), many(1, ' , '), many(3, ',\t'), many(1023, ', '), many(1024, ','), many(1025, ','), '[ ]', '[null]', '[["x"]]'];
  return [
    ...numbers.flatMap((n, k) => integers.map((f, j) => line(100 + k * 10 + j, f, n))),
    ...[...accounts, ...['1'.repeat(31), '1'.repeat(45), '0OIl', 'a,b', 'a\\"b'].map((x) => `["${x}"]`)].map((a, k) => line(300 + k, 'accounts', a)),
    `${line(400, 'raw_data', '"a\\u0041"')}\r`,
    `\ufeff${line(401, 'fee', '1')}`,
    `\ufeff${line(402, 'fee', '2')}\r`,
    `${line(403, 'fee', '3')}\r\r`,
    `  ${line(404, 'log_messages', '["a","b\\n"]')}  `,
    line(405, 'error_message', '7'),
    line(406, 'instruction_type', '"a\\u00e9"'),
  ];
};

/** Columns read as the row holds them: 64-bit numbers as text, the time as Unix seconds, the flag as 0/1. */
const TEXT_OF: Record<string, string> = { slot: 'toString', fee: 'toString', block_time: 'toUInt32', success: 'toUInt8' };

let s: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  s = await startServices({ INGEST_CHECKS: 'engine', INGEST_ENGINE_MIN_RECORDS: '1' });
});
afterAll(async () => s.cleanup());

/** What the JavaScript record steps answer for each line of a body, by line number. */
async function javascriptAnswers(b: Buffer) {
  const known = protocolLookup(await s.registry.list());
  const ctx = { maxRecordBytes: s.config.ingest.maxRecordBytes, known, hasher: cityHasher() };
  return new Map(ndjsonRecords(b).map((r) => [(r.position as { line: number }).line, parseRecord(r.value, ctx)] as const));
}

describe('record checks in the engine', () => {
  it('answers every line as the JavaScript checks do, or defers it to them', async () => {
    const b = body('HHHV');
    const js = await javascriptAnswers(b);
    const checks = new EngineChecks(s.wh, tmpdir());
    const { batch, result } = await checks.check(b, s.config.ingest.maxRecordBytes, await s.registry.list());
    await checks.release(batch);
    const engine = new Map(result.refused.map((r) => [r.line, r] as const));
    const deferred = new Set(result.deferred.map((d) => d.line));
    let agreed = 0;
    for (const [line, answer] of js) {
      if (deferred.has(line)) continue;
      const refused = engine.get(line);
      if (answer.kind === 'ok') expect(refused, `line ${line}`).toBeUndefined();
      else {
        expect({ line, code: refused?.code, reason: refused?.reason }).toEqual({ line, code: answer.code, reason: answer.reason });
        agreed += 1;
      }
    }
    const validLines = [...js.values()].filter((a) => a.kind === 'ok').length;
    expect(result.valid + [...deferred].filter((l) => js.get(l)?.kind === 'ok').length).toBe(validLines);
    // The engine decides nearly all of it: only the classes migration 121 names are deferred.
    expect(agreed).toBeGreaterThan(600);
    expect(deferred.size).toBeLessThan(20);
  });

  it("answers every line as migration 121's checks did: the cheaper checks (122) give the same code, message and row", async () => {
    // Migration 121's view, as its file created it, beside the store's (122's).
    const text = readFileSync(path.join(MIGRATIONS_DIR, '121_ingest_in_engine_checks.sql'), 'utf8');
    const create = 'CREATE VIEW IF NOT EXISTS ingest_line_checks AS';
    const at = text.indexOf(create);
    await s.wh.exec(`CREATE VIEW IF NOT EXISTS ingest_line_checks_121 AS ${text.slice(at + create.length, text.indexOf(';\n', at))}`);
    const generated = (await demoRecords(s, 2000, 21)).map((r, i) => JSON.stringify({ transaction_index: i % 300, ...r }));
    const b = Buffer.concat([body('HHHQ'), Buffer.from([...fastPathLines('HHHF'), ...generated].join('\n'))]);
    const checks = new EngineChecks(s.wh, tmpdir());
    const registry = await s.registry.list();
    const loaded = await checks.load(b, s.config.ingest.maxRecordBytes, registry);
    try {
      const answers = (view: string) =>
        s.wh.queryText(
          `SELECT * FROM ${view}(batch = {b:String}, max_bytes = {m:UInt32}, names = {names:Array(String)}, programs = {programs:Array(String)}) ORDER BY n`,
          'JSONEachRow',
          {
            params: {
              b: loaded.batch,
              m: s.config.ingest.maxRecordBytes,
              names: registry.map((r) => r.protocolName),
              programs: registry.map((r) => r.programId),
            },
          },
        );
      const [before, now] = [(await answers('ingest_line_checks_121')).split('\n'), (await answers(TABLES.ingestLineChecks)).split('\n')];
      expect(now.length).toBe(loaded.lines + 1);
      for (let i = 0; i < before.length; i++) expect(now[i], `line ${i + 1}`).toBe(before[i]);
      // Every kind of answer is among them: valid, refused with each code the engine gives, deferred, skipped.
      const codes = new Set(now.filter((l) => l !== '').map((l) => (JSON.parse(l) as { code: string }).code));
      expect([...codes].sort()).toEqual(
        [
          '',
          'accounts_count_missing',
          'defer',
          'not_object',
          'oversized',
          'program_mismatch',
          'program_unregistered',
          'schema',
          'skip',
          'slot_out_of_range',
          'unknown_protocol',
        ].sort(),
      );
    } finally {
      await checks.release(loaded.batch);
      await s.wh.exec('DROP VIEW IF EXISTS ingest_line_checks_121');
    }
  });

  it('stores the rows the JavaScript path builds, free text byte for byte, and nothing twice', async () => {
    const b = body('HHHW');
    const js = await javascriptAnswers(b);
    const first = await s.pipeline.ingestNdjson(b, 'http');
    const oks = [...js.values()].flatMap((a) => (a.kind === 'ok' ? [a.value.row] : []));
    const identities = new Set(oks.map((r) => `${r.signature}#${r.instruction_index}`));
    expect(first.accepted).toBe(identities.size);
    expect(first.accepted + first.duplicates).toBe(oks.length);
    expect(first.rejected.map((r) => r.code)).toEqual([...js.entries()].filter(([, a]) => a.kind !== 'ok').map(([, a]) => (a as { code: string }).code));
    // transaction_index is stored only as the middle part of rid (EPHEMERAL, migration 110).
    const columns = BASE_COLUMNS.filter((c) => c !== 'transaction_index');
    const stored = await s.wh.query<Record<string, unknown>>(
      `SELECT ${columns.map((c) => (TEXT_OF[c] ? `${TEXT_OF[c]}(${c}) AS ${c}` : c)).join(', ')}, toString(rid) AS rid FROM transactions
       WHERE signature IN {sigs:Array(String)} ORDER BY signature, instruction_index`,
      { params: { sigs: oks.map((r) => r.signature) } },
    );
    const byId = new Map(stored.map((r) => [`${r.signature as string}#${r.instruction_index as number}`, r] as const));
    expect(byId.size).toBe(identities.size);
    for (const row of oks) {
      const got = byId.get(`${row.signature}#${row.instruction_index}`)!;
      for (const c of columns) expect(String(got[c]), `${row.signature} ${c}`).toBe(String(c === 'success' ? Number(row[c]) : row[c]));
      const position = row.transaction_index ?? -1;
      const rid = position >= 0 ? packRid(BigInt(row.slot), position, row.instruction_index) : undefined;
      if (rid !== undefined) expect(got.rid, `${row.signature} rid`).toBe(rid.toString());
    }
    // The same body again: every valid line a duplicate, every count unchanged.
    const before = await tableCounts(s);
    const again = await s.pipeline.ingestNdjson(b, 'http');
    expect(again).toMatchObject({ accepted: 0, duplicates: oks.length });
    expect(await tableCounts(s)).toEqual(before);
  });

  it('defers a record without transaction_index, which the writer gives a counted position', async () => {
    const { transaction_index: _, ...unplaced } = { ...valid, signature: 'HHHY'.padEnd(86, 'z') };
    const line = JSON.stringify(unplaced);
    const checks = new EngineChecks(s.wh, tmpdir());
    const { batch, result } = await checks.check(Buffer.from(line), s.config.ingest.maxRecordBytes, await s.registry.list());
    await checks.release(batch);
    expect(result).toMatchObject({ valid: 0, refused: [], deferred: [{ line: 1 }] });
    expect(await s.pipeline.ingestNdjson(Buffer.from(line), 'http')).toMatchObject({ accepted: 1, rejected: [] });
    const [row] = await s.wh.query<{ rid: string }>('SELECT toString(rid) AS rid FROM transactions WHERE signature = {s:String}', {
      params: { s: unplaced.signature },
    });
    expect(unpackRid(BigInt(row!.rid)).position).toBeGreaterThanOrEqual(FIRST_COUNTED_POSITION);
  });

  it('stores once a record repeated in the body, in a deferred line, or after a blank line', async () => {
    const line = JSON.stringify({ ...valid, signature: 'HHHX'.padEnd(86, 'z') });
    // The same record with a number past UInt64 in an unknown field: valid JSON to JSON.parse,
    // deferred by the engine; its identity is the first line's.
    const deferredTwin = line.replace(/}$/, ',"extra":123456789012345678901234567890}');
    const before = await tableCounts(s);
    const report = await s.pipeline.ingestNdjson(Buffer.from(`${line}\n\n${line}\r\n${deferredTwin}\n`), 'http');
    expect(report).toMatchObject({ accepted: 1, duplicates: 2, rejected: [] });
    const after = await tableCounts(s);
    expect(after.transactions).toBe(before.transactions + 1);
    const [dead] = await s.wh.query<{ n: string }>(`SELECT count() AS n FROM dead_letters WHERE payload LIKE '%HHHX%'`);
    expect(Number(dead!.n)).toBe(0);
  });

  it("checks and stores a body with its values as literals, never in chDB's line of bound statements", async () => {
    // A bound statement of the process waits for every other one (chDB's binding): a serving
    // read would wait behind a body's checks (bench/RESULTS.md, session 17). Each statement of
    // the engine path that reads or writes a batch's lines asks for literal values.
    const seen: { sql: string; literal: boolean }[] = [];
    const opts = (sql: string, o: QueryOptions = {}): QueryOptions => {
      if (/ingest_lines|ingest_checked/.test(sql)) seen.push({ sql, literal: o.params === undefined || o.literalParams === true });
      return o;
    };
    const wh: Warehouse = Object.assign(Object.create(s.wh) as Warehouse, {
      query: <T>(sql: string, o?: QueryOptions) => s.wh.query<T>(sql, opts(sql, o)),
      exec: (sql: string, o?: QueryOptions) => s.wh.exec(sql, opts(sql, o)),
    });
    const pipeline = new IngestPipeline(wh, s.registry, s.dataVersion, createLogger('silent'), {
      maxRecordBytes: s.config.ingest.maxRecordBytes,
      batchRows: 700,
      writerId: s.config.ingest.writerId,
      checks: 'engine',
    });
    const line = JSON.stringify({ ...valid, signature: 'LLLX'.padEnd(86, 'z') });
    const unknown = JSON.stringify({ ...valid, signature: 'LLLY'.padEnd(86, 'z'), protocol_name: 'no_such_protocol' });
    const report = await pipeline.ingestNdjson(Buffer.from(`${line}\n${unknown}\n${line}\n`), 'http');
    expect(report).toMatchObject({ accepted: 1, duplicates: 1, rejected: [{ code: 'unknown_protocol', position: { line: 2 } }] });
    // Staging, checks, the two decision reads, the insert, the dead letter, the two deletes.
    expect(seen.length).toBeGreaterThanOrEqual(8);
    expect(seen.filter((x) => !x.literal).map((x) => x.sql)).toEqual([]);
  });

  it('repairs an insert that stopped part-way before it checks the next body, and the replay adds nothing', async () => {
    const records = await demoRecords(s, 1500, 5);
    const ndjson = (rs: readonly object[]) => Buffer.from(rs.map((r) => JSON.stringify(r)).join('\n'));
    const [first, second] = [records.slice(0, 1000), records.slice(1000)];
    expect((await s.pipeline.ingestNdjson(ndjson(first), 'http')).rejected).toEqual([]);
    const good = await tableCounts(s);
    // A crash inside the engine's insert of `second`: the journal's 'begin', the base rows
    // stored, the view rows of those records never committed.
    const journal = new IngestJournal(s.wh, s.config.ingest.writerId, createLogger('silent'));
    await journal.begin(second.map((r) => ({ protocol_name: r.protocol_name, block_time: r.block_time })));
    await s.pipeline.ingestNdjson(ndjson(second), 'http');
    await s.wh.exec('DELETE FROM tx_rid_by_sig WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))', {
      params: { sigs: second.map((r) => r.signature) },
    });
    expect((await tableCounts(s)).tx_rid_by_sig).toBeLessThan((await tableCounts(s)).transactions);
    // The restarted process, checks in the engine: it repairs first, then every record is a duplicate.
    const restarted = new IngestPipeline(s.wh, s.registry, s.dataVersion, createLogger('silent'), {
      maxRecordBytes: s.config.ingest.maxRecordBytes,
      batchRows: 700,
      writerId: s.config.ingest.writerId,
      checks: 'engine',
    });
    expect(await restarted.ingestNdjson(ndjson(records), 'http')).toMatchObject({ accepted: 0, duplicates: records.length });
    const counts = await tableCounts(s);
    expect(counts.transactions).toBe(good.transactions + second.length);
    expect(counts.tx_rid_by_sig).toBe(counts.transactions);
    const [keys] = await s.wh.query<{ n: string }>('SELECT count() AS n FROM ingest_keys');
    expect(Number(keys!.n)).toBe(counts.transactions);
  });

  it('checks a Kafka batch in the engine as the JavaScript steps do: codes, messages, positions, dead letters, and nothing twice', async () => {
    // Each line of the hostile corpus and the variants a Kafka message of its own.
    const messages = (prefix: string) =>
      body(prefix)
        .toString('latin1')
        .split('\n')
        .map((text, i) => ({ value: Buffer.from(text, 'latin1'), position: { topic: `kc-${prefix}`, partition: 1, offset: String(100 + i) } }));
    const javascript = new IngestPipeline(s.wh, s.registry, s.dataVersion, createLogger('silent'), {
      maxRecordBytes: s.config.ingest.maxRecordBytes,
      batchRows: s.config.ingest.batchRows,
      writerId: 'kafka-js',
      checks: 'javascript',
    });
    const deadLetters = (source: string) =>
      s.wh.query<Record<string, string>>('SELECT position, code, reason, payload FROM dead_letters WHERE source = {s:String} ORDER BY position', {
        params: { s: source },
      });
    const sorted = (r: IngestReport) =>
      [...r.rejected].sort((a, b) => Number((a.position as { offset: string }).offset) - Number((b.position as { offset: string }).offset));
    // The same messages through both paths, each path first once: the answers are the same, the
    // second path finds every valid record stored, and the tables count each record once.
    for (const [first, second, prefix] of [[s.pipeline, javascript, 'KCE'] as const, [javascript, s.pipeline, 'KCJ'] as const]) {
      const batch = messages(prefix);
      expect(recordsBody(batch).lines.length).toBeGreaterThan(batch.length * 0.9);
      const one = await first.ingest(batch, `kafka:${prefix}-1`);
      const before = await tableCounts(s);
      const two = await second.ingest(batch, `kafka:${prefix}-2`);
      expect(await tableCounts(s)).toEqual(before);
      expect(one.accepted).toBeGreaterThan(100);
      expect(one.rejected.length).toBeGreaterThan(600);
      expect(two).toMatchObject({ accepted: 0, duplicates: one.accepted + one.duplicates });
      expect(sorted(two)).toEqual(sorted(one));
      const [a, b] = [await deadLetters(`kafka:${prefix}-1`), await deadLetters(`kafka:${prefix}-2`)];
      expect(a.length).toBe(one.rejected.length);
      expect(b).toEqual(a);
      expect(a[0]!.position).toMatch(new RegExp(`^kc-${prefix}/1/\\d+$`));
    }
  });

  it("checks bodies beside each other's turns: concurrent calls with shared records store each record once and lose none", async () => {
    const records = await demoRecords(s, 3000, 13);
    const lines = records.map((r) => JSON.stringify(r));
    // Six calls at once, each a third of the records, every record in two of them; one refused line each.
    const bodies = [0, 1, 2, 3, 4, 5].map((i) => {
      const from = (i % 3) * 1000;
      return Buffer.from([...lines.slice(from, from + 1000), `{"signature": ${i}}`].join('\n'));
    });
    const before = await tableCounts(s);
    const reports = await Promise.all(bodies.map((b, i) => s.pipeline.ingestNdjson(b, `concurrent-${i}`)));
    expect(reports.reduce((n, r) => n + r.accepted, 0)).toBe(records.length);
    expect(reports.reduce((n, r) => n + r.duplicates, 0)).toBe(records.length);
    for (const r of reports) expect(r.rejected.map((x) => [x.position, x.code])).toEqual([[{ line: 1001 }, 'schema']]);
    const after = await tableCounts(s);
    expect(after.transactions).toBe(before.transactions + records.length);
    expect(after.tx_rid_by_sig).toBe(after.transactions);
  });

  it('takes a backfill body in pieces: line numbers run on across them, and the progress reaches the total', async () => {
    const records = await demoRecords(s, 11_000, 9);
    const lines = records.map((r) => JSON.stringify(r));
    lines.splice(7500, 0, '{"signature": 1}'); // line 7,501: in the second piece of 5,000
    const body = Buffer.from(lines.join('\n'));
    const progress = s.pipeline.backfills.start('engine-pieces', lines.length);
    const report = await s.pipeline.ingestNdjson(body, 'http', { lane: 'backfill', progress });
    progress.finish();
    expect(report.accepted).toBe(records.length);
    expect(report.rejected.map((r) => [r.position, r.code])).toEqual([[{ line: 7501 }, 'schema']]);
    expect(s.pipeline.backfills.list().find((b) => b.name === 'engine-pieces')).toMatchObject({ done: lines.length, total: lines.length });
  });
});
