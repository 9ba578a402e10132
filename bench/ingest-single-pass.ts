// Single-pass checks in the engine (issue 40): a prototype, not wired into the pipeline.
// Today's engine path (ingest/engine-ingest.ts, engine-checks.ts) runs about a dozen statements
// a body (stage the lines in a Memory table, the checks view into another, four decision reads,
// journal, INSERT SELECT into transactions, dead letters, two deletes): about two passes over
// the data, 0.53 of the engine's own insert of the same bytes (bench/RESULTS.md). Here the
// body's lines go in ONE insert into a Null table, and materialized views do the rest inside
// that statement:
//
//   lines (Null) --checked_mv: migration 121's checks, once a line--> checked (Null)
//     checked --fresh_mv: valid, first of its identity in the block, not in ingest_keys--> fresh (Null)
//         fresh --store_mv--> transactions (whose own views fire, chained) ; --stored_mv--> outcome (count)
//     checked --checked_dead_mv: refused--> dead_letters (the codes and messages of the checks)
//     checked --checked_valid_mv, checked_refused_mv--> outcome (valid count; refused and deferred lines)
//
// then one read of the call's outcome (the answer: stored, duplicates, rejections by line,
// deferred lines for the JavaScript steps) and its delete. The checks are migration 121's own
// view (ingest_line_checks, read from system.tables, its source and bound parameters replaced:
// a materialized view takes none, so the registry and the size limit are literals, and the
// views are rebuilt when they change); its functions are the migration's. Every object lives
// in a database of this script's own, dropped at the end.
//
//   npx tsx bench/ingest-single-pass.ts [--rows 1000000] [--records 40000] [--rounds 5] [--threads 1] [--skip two,checks] [--out f.json]
//   npx tsx bench/ingest-single-pass.ts --check [--block-rows N]   (correctness on a fresh store, against
//     IngestPipeline.ingest; --block-rows: the statement in blocks of N lines, which (b) does not survive)
//
// Rounds: each measures (a) the engine's own insert of a body (ingest-support.ts engineInsert,
// the ceiling of ingest-paths.ts), (b) the single pass, (b2) the two statements, (c) today's
// engine path (IngestPipeline.ingestNdjson with checks 'engine'), and to see where the time
// goes, (d) the checks alone (the lines through the checks into a Null table with no views) and
// (e) the engine's JSONEachRow parse alone (the bytes into a Null table of the base columns),
// in an order that rotates each round; each a fresh body. Since checks40 the store's checks are
// migration 122's (cheaper, the same answers); (two121) and (checks121) are (b2) and (d) with
// migration 121's checks, in the same rounds. Ratios are to (a) in the same round;
// medians reported. A body must reach the views as one block in (b) (checked each call).
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../core/logger.ts';
import { ndjsonRecords } from '../ingest/ndjson.ts';
import { IngestPipeline } from '../ingest/pipeline.ts';
import { TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { machine, median, timeMs } from './bench-support.ts';
import { startBenchServer, startBenchServices } from './bench-server.ts';
import { benchPipelineOptions, ENGINE_INSERT, engineInsert, freshBodies, warmPipeline } from './ingest-support.ts';
import { CHECKS_121, DB, type Design, JOURNAL_WRITER, SinglePass, singlePassReport } from './single-pass.ts';

const say = (s: string): void => void process.stderr.write(`${s}\n`);

const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    records: { type: 'string' },
    rounds: { type: 'string' },
    skip: { type: 'string' },
    out: { type: 'string' },
    check: { type: 'boolean' },
    'block-rows': { type: 'string' },
    threads: { type: 'string' },
  },
});

/** The lines statement's max_threads (--threads; 1 as today's staging). */
const THREADS = Number(values.threads ?? 1);

async function rounds(): Promise<void> {
  const ROWS = Number(values.rows ?? 1_000_000);
  const RECORDS = Number(values.records ?? 40_000);
  const ROUNDS = Number(values.rounds ?? 5);
  const SKIP = new Set((values.skip ?? '').split(',').filter((x) => x !== ''));
  const server = await startBenchServer(ROWS);
  const { wh, registry } = server.services;
  const fresh = freshBodies(wh, RECORDS);
  const stageDir = await mkdtemp(path.join(tmpdir(), 'txa-single-'));
  const sp = new SinglePass(wh, stageDir, undefined, THREADS);
  const opts = benchPipelineOptions(server.services);
  const log = createLogger('silent');
  await sp.create(await registry.list(), opts.maxRecordBytes);
  const js = new IngestPipeline(wh, registry, server.services.dataVersion, log, opts);
  const inEngine = new IngestPipeline(wh, registry, server.services.dataVersion, log, { ...opts, checks: 'engine' });
  await warmPipeline(js, 'JavaScript pipeline', fresh, say);
  await warmPipeline(inEngine, 'engine pipeline', fresh, say);
  await inEngine.ingestNdjson(Buffer.from(await fresh(2000)), 'bench-warm');
  await singlePassReport(sp, js, Buffer.from(await fresh(2000)), 'bench-warm');
  await singlePassReport(sp, js, Buffer.from(await fresh(2000)), 'bench-warm', 'two');
  await singlePassReport(sp, js, Buffer.from(await fresh(2000)), 'bench-warm', 'journal');
  await singlePassReport(sp, js, Buffer.from(await fresh(2000)), 'bench-warm', 'two121');
  await singlePassReport(sp, js, Buffer.from(await fresh(2000)), 'bench-warm', 'fast');
  await sp.checksOnly(Buffer.from(await fresh(2000)));
  await sp.checksOnly(Buffer.from(await fresh(2000)), CHECKS_121);
  say(
    `store: ${ROWS.toLocaleString('en-US')} rows; ${RECORDS.toLocaleString('en-US')} fresh records a body; lines statement max_threads ${THREADS}; ${machine()}`,
  );

  const counts = async (): Promise<number[]> =>
    Promise.all(
      [TABLES.transactions, TABLES.ingestKeys, 'tx_by_rid'].map(async (t) => Number((await wh.query<{ n: string }>(`SELECT count() AS n FROM ${t}`))[0]!.n)),
    );
  const rate = (ms: number): number => Math.round(RECORDS / (ms / 1000));
  type Case = 'engine' | Design | 'today' | 'checks' | 'checks121' | 'parse';
  // Each case answers its own time: (b)'s checks of what it stored stay outside it.
  /** (b2f): the share of each body's lines that took the common path. */
  const fastShare: number[] = [];
  const statementMs: Record<Design, number> = { single: 0, journal: 0, two: 0, two121: 0, fast: 0 };
  const designed = async (b: Buffer, design: Design): Promise<number> => {
    const before = await counts();
    let r!: Awaited<ReturnType<typeof singlePassReport>>;
    const ms = await timeMs(async () => void (r = await singlePassReport(sp, js, b, 'bench', design)));
    statementMs[design] = r.insertMs;
    const after = await counts();
    if (r.accepted !== RECORDS || r.blocks !== 1) throw new Error(`${design}: accepted ${r.accepted} in ${r.blocks} blocks`);
    if (design === 'fast') fastShare.push(r.fast / RECORDS);
    if (after.some((n, i) => n - before[i]! !== RECORDS)) throw new Error(`${design}: counts ${before} -> ${after}`);
    return ms;
  };
  const cases: Record<Case, (b: Buffer) => Promise<number>> = {
    engine: (b) => timeMs(() => engineInsert(wh, b)),
    single: (b) => designed(b, 'single'),
    journal: (b) => designed(b, 'journal'),
    two: (b) => designed(b, 'two'),
    two121: (b) => designed(b, 'two121'),
    fast: (b) => designed(b, 'fast'),
    today: async (b) => {
      let accepted = 0;
      const ms = await timeMs(async () => void ({ accepted } = await inEngine.ingestNdjson(b, 'bench')));
      if (accepted !== RECORDS) throw new Error(`engine checks accepted ${accepted}`);
      return ms;
    },
    checks: (b) => timeMs(() => sp.checksOnly(b)),
    checks121: (b) => timeMs(() => sp.checksOnly(b, CHECKS_121)),
    parse: (b) => timeMs(() => wh.insertBytes(`${DB}.parsed`, b, 'JSONEachRow', ENGINE_INSERT)),
  };
  const order = (['engine', 'single', 'journal', 'two', 'two121', 'fast', 'today', 'checks', 'checks121', 'parse'] as const).filter((c) => !SKIP.has(c));
  const perRound: Record<string, number | string>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const load = loadavg()[0]!;
    const turn = order.map((_, i) => order[(i + r) % order.length]!);
    const got: Partial<Record<Case, number>> = {};
    for (const c of turn) {
      const b = Buffer.from(await fresh());
      got[c] = rate(await cases[c](b));
    }
    const row = {
      load,
      order: turn.join(','),
      ...got,
      singleInsertMs: Math.round(statementMs.single),
      journalAndInsertMs: Math.round(statementMs.journal),
      twoInsertsMs: Math.round(statementMs.two),
      'single/engine': got.single! / got.engine!,
      'journal/engine': got.journal! / got.engine!,
      'two/engine': got.two! / got.engine!,
      ...(got.fast === undefined ? {} : { 'fast/engine': got.fast / got.engine!, 'fast/two': got.fast / got.two! }),
      ...(got.two121 === undefined ? {} : { 'two121/engine': got.two121 / got.engine!, 'two/two121': got.two! / got.two121 }),
      'today/engine': got.today! / got.engine!,
      'single/today': got.single! / got.today!,
      'single/two': got.single! / got.two!,
      ...(got.checks === undefined ? {} : { 'checks/engine': got.checks / got.engine! }),
      ...(got.checks121 === undefined ? {} : { 'checks121/engine': got.checks121 / got.engine! }),
      ...(got.parse === undefined ? {} : { 'parse/engine': got.parse / got.engine! }),
    };
    perRound.push(row);
    say(
      `round ${r + 1}/${ROUNDS} (load ${load.toFixed(1)} on ${availableParallelism()} cores; ${row.order}): records/s engine ${got.engine}, single pass ${got.single} (its INSERT ${Math.round(statementMs.single)} ms), with the journal ${got.journal} (${Math.round(statementMs.journal)} ms), two statements ${got.two} (${Math.round(statementMs.two)} ms), with 121's checks ${got.two121}, with the common path ${got.fast}, today ${got.today}` +
        `${got.checks === undefined ? '' : `, checks alone ${got.checks}`}${got.checks121 === undefined ? '' : `, 121's checks alone ${got.checks121}`}${got.parse === undefined ? '' : `, the engine's parse alone ${got.parse}`}; single ${row['single/engine'].toFixed(2)} of the engine, with the journal ${row['journal/engine'].toFixed(2)}, two ${row['two/engine'].toFixed(2)}, two with 121's checks ${(got.two121! / got.engine!).toFixed(2)}, with the common path ${(got.fast! / got.engine!).toFixed(2)}, today ${row['today/engine'].toFixed(2)}, single/today ${row['single/today'].toFixed(2)}`,
    );
  }
  const med = (k: string): number => median(perRound.map((x) => Number(x[k])).filter((x) => Number.isFinite(x)));
  const medians = Object.fromEntries(
    [
      'single/engine',
      'journal/engine',
      'two/engine',
      'two121/engine',
      'two/two121',
      'fast/engine',
      'fast/two',
      'today/engine',
      'single/today',
      'single/two',
      'checks/engine',
      'checks121/engine',
      'parse/engine',
    ].map((k) => [k, Number(med(k).toFixed(3))]),
  );
  say(`medians over ${ROUNDS} rounds: ${JSON.stringify(medians)}`);
  if (fastShare.length > 0) say(`(b2f): lines on the common path ${fastShare.map((x) => `${(x * 100).toFixed(1)} %`).join(', ')}`);
  const report = { date: new Date().toISOString(), machine: machine(), rows: ROWS, records: RECORDS, threads: THREADS, rounds: perRound, medians };
  if (values.out) {
    mkdirSync(path.dirname(values.out), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
  console.log(JSON.stringify(report));
  await sp.drop();
  await rm(stageDir, { recursive: true, force: true });
  await server.close();
}

/** Columns that hold the time of the insert itself: not compared. */
const CLOCK_COLUMNS = ['ingested_at', 'rejected_at', 'at', 'newest_ingested'];
/** Tables ingest does not write. */
const NOT_INGEST = ['protocols', 'schema_migrations', 'accounts', 'api_keys', 'api_key_usage', 'dashboard_sessions', 'x402_payments', 'x402_payment_claims'];

/** Every table ingest writes, its rows as text (insert clocks left out; rid, a MATERIALIZED column, included). */
async function snapshot(wh: Warehouse): Promise<Map<string, string>> {
  const tables = await wh.query<{ name: string; engine: string }>(
    `SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name NOT IN {x:Array(String)} ORDER BY name`,
    { params: { x: NOT_INGEST } },
  );
  const out = new Map<string, string>();
  for (const { name, engine } of tables) {
    const cols = await wh.query<{ name: string; type: string }>(
      `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {t:String} AND default_kind != 'EPHEMERAL' AND name NOT IN {x:Array(String)} ORDER BY position`,
      { params: { t: name, x: CLOCK_COLUMNS } },
    );
    // Aggregate states as their values (a state is not comparable, nor sortable).
    const state = (c: { type: string }): boolean => c.type.startsWith('AggregateFunction');
    const list = cols.map((c) => (state(c) ? `finalizeAggregation(${c.name}) AS ${c.name}` : c.name)).join(', ');
    const keys = cols.filter((c) => !state(c)).map((c) => c.name);
    out.set(name, await wh.queryText(`SELECT ${list} FROM ${name}${engine === 'MergeTree' ? '' : ' FINAL'} ORDER BY ${keys.join(', ')}`, 'JSONEachRow'));
  }
  return out;
}

/** A small body with a few invalid lines and a repeated one, each kind named. */
async function checkBody(fresh: (n?: number) => Promise<string>): Promise<string> {
  const lines = (await fresh(30)).trim().split('\n');
  const edit = (i: number, f: (o: Record<string, unknown>) => void): string => {
    const o = JSON.parse(lines[i]!) as Record<string, unknown>;
    f(o);
    return JSON.stringify(o);
  };
  return `${[
    lines[0],
    lines[1],
    lines[2],
    edit(3, (o) => void (o.fee = String(o.fee))), // schema: fee must be integer
    '', // blank: skipped
    edit(4, (o) => void (o.protocol_name = 'no_such_protocol')), // unknown_protocol
    edit(5, (o) => void delete o.slot), // schema: missing required field slot
    '{"signature": ', // not JSON: deferred by the engine, not_json in JavaScript
    '[1,2,3]', // not_object
    edit(6, (o) => void delete o.transaction_index), // deferred (its id is the writer's), stored by the JavaScript steps
    lines[2], // the repeated line: a duplicate within the body
    edit(7, (o) => void (o.raw_data = 'x'.repeat(300 * 1024))), // oversized
    edit(8, (o) => void (o.accounts = ['not-base58'])), // schema: accounts.0
    ...lines.slice(9),
  ].join('\n')}\n`;
}

/**
 * Correctness on a fresh store: the body through IngestPipeline.ingest (the JavaScript path),
 * every table ingest writes kept; then for each design, the tables emptied and the same body
 * through it (its deferred lines through a new JavaScript pipeline, as engine-ingest.ts does):
 * the same answer and the same rows wanted; then the body again: nothing more stored.
 */
async function check(): Promise<void> {
  const services = await startBenchServices();
  const stageDir = await mkdtemp(path.join(tmpdir(), 'txa-single-'));
  const { wh, registry } = services;
  const failures: string[] = [];
  const same = (what: string, a: unknown, b: unknown): void => {
    const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
    say(`${x === y ? 'same   ' : 'DIFFERS'} ${what}${x === y ? '' : `\n  JavaScript: ${x.slice(0, 600)}\n  this:       ${y.slice(0, 600)}`}`);
    if (x !== y) failures.push(what);
  };
  // The JavaScript path journals its stored rows' buckets; (b+j)'s 'begin' must name every one of them.
  const journalled = (design: Design, js: string, here: string): void => {
    const begun = (text: string, writer?: string): string[] =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { writer: string; state: string; buckets: unknown[] })
        .filter((e) => e.state === 'begin' && (writer === undefined || e.writer === writer))
        .flatMap((e) => e.buckets.map((b) => JSON.stringify(b)));
    const wanted = new Set(begun(js));
    if (design !== 'journal') {
      say(`(${TABLES.ingestJournal}: ${design} journals only its deferred lines)`);
      return;
    }
    const ours = new Set(begun(here, JOURNAL_WRITER));
    const missing = [...wanted].filter((b) => !ours.has(b));
    same(`journal: its 'begin' names every bucket the JavaScript path journalled (${wanted.size}; it names ${ours.size})`, [], missing);
  };
  try {
    const opts = benchPipelineOptions(services);
    const log = createLogger('silent');
    const body = Buffer.from(await checkBody(freshBodies(wh, 30)));
    const jsPath = new IngestPipeline(wh, registry, services.dataVersion, log, opts);
    await jsPath.prepare();
    const a = await jsPath.ingest(ndjsonRecords(body), 'check');
    const before = await snapshot(wh);
    const blockRows = values['block-rows'] === undefined ? undefined : Number(values['block-rows']);
    const sp = new SinglePass(wh, stageDir, blockRows, THREADS);
    await sp.create(await registry.list(), opts.maxRecordBytes);
    for (const design of ['single', 'journal', 'two', 'two121', 'fast'] as const) {
      for (const t of before.keys()) await wh.exec(`TRUNCATE TABLE ${t}`);
      const forDeferred = new IngestPipeline(wh, registry, services.dataVersion, log, { ...opts, writerId: `check-${design}` });
      await forDeferred.prepare();
      const { blocks, insertMs: _, fast, ...b } = await singlePassReport(sp, forDeferred, body, 'check', design);
      say(
        `\n${design}: ${b.accepted} stored, ${b.duplicates} duplicates, ${b.rejected.length} rejected (JavaScript path: ${a.accepted}, ${a.duplicates}, ${a.rejected.length}); ` +
          `${blocks} block${blocks === 1 ? '' : 's'} of checked lines${blockRows === undefined ? '' : `, --block-rows ${blockRows}`}${design === 'fast' ? `; ${fast} valid lines on the common path` : ''}`,
      );
      same(`${design}: answer (accepted, duplicates, rejections with code, message, line)`, a, b);
      const after = await snapshot(wh);
      for (const [t, rows] of before) {
        if (t === TABLES.ingestJournal) {
          journalled(design, rows, after.get(t)!);
          continue;
        }
        same(`${design}: ${t} (${rows.split('\n').length - 1} rows)`, rows, after.get(t));
      }
      const again = await singlePassReport(sp, forDeferred, body, 'check', design);
      same(
        `${design}: replay: nothing stored, every valid line a duplicate`,
        { accepted: 0, duplicates: a.accepted + a.duplicates },
        { accepted: again.accepted, duplicates: again.duplicates },
      );
      const replayed = await snapshot(wh);
      for (const t of [TABLES.transactions, TABLES.ingestKeys, 'tx_by_rid', 'protocol_hourly'])
        same(`${design}: replay: ${t} unchanged`, after.get(t), replayed.get(t));
    }
    await sp.drop();
  } finally {
    await rm(stageDir, { recursive: true, force: true });
    await services.cleanup();
  }
  say(failures.length === 0 ? '\ncheck: all the same' : `\ncheck: ${failures.length} differ: ${failures.join('; ')}`);
  if (failures.length > 0) process.exitCode = 1;
}

await (values.check ? check() : rounds());
