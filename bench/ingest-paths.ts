// Ingest at the engine's speed (issue 15): how fast records reach the engine through each
// insert path and through the pipeline, as ratios to the engine's own insert of the very
// same NDJSON bytes through the same views, in the same run on the same store.
//
//   npx tsx bench/ingest-paths.ts [--rows 1000000] [--records 40000] [--rounds 1] [--workers 2] [--only path,pipeline,http] [--out bench/results/x.json]
//
// A store of --rows demo rows (all views) is seeded first; every case then inserts
// --records fresh demo records (a seed of its own, so none is a duplicate; the data's
// last day) into it:
//   ceiling        the engine alone: one INSERT ... FORMAT JSONEachRow of the NDJSON bytes
//                  (measured first and last; the ratios use their mean)
//   path:*         from parsed, validated rows to the engine, the build and the insert
//                  timed apart: JSONEachRow of JSON.stringify'd rows (the path before),
//                  JSONEachRow of the original lines, RowBinary built in JS, and a staged
//                  file the engine reads (INSERT ... SELECT FROM file())
//   pipeline:*     IngestPipeline.ingest of the NDJSON lines, everything included
//                  (parse, validate, de-duplicate, journal, insert): as received / re-serialised
//   http           POST /admin/ingest of the NDJSON body over loopback
//   rounds         (--rounds N) N rounds of: the engine's insert of the bytes from a buffer,
//                  from a staged file, the pipeline, the pipeline de-duplicating by the
//                  signature index (the other design, issue 40), the pipeline with --workers parse
//                  workers (default 2; the others parse on the main thread), POST /admin/ingest
//                  (as the service is configured: INGEST_PARSE_WORKERS, INGEST_CHECKS), the pipeline
//                  with its checks in the engine (ingestNdjson, INGEST_CHECKS=engine); each round's ratios
//                  are to that round's best engine path, so a change of load between rounds
//                  (the machine is shared) moves both sides; the medians are reported.
// The pipelines are warmed first (one small ingest, JIT warm); with --rounds, the time from a
// new pipeline to its first accepted record is measured first (issue 40: start at any size).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../core/logger.ts';
import { ndjsonRecords } from '../ingest/ndjson.ts';
import { IngestPipeline } from '../ingest/pipeline.ts';
import { checkRecord, protocolLookup } from '../ingest/record-schema.ts';
import { BASE_COLUMNS, TABLES, type BaseRow } from '../warehouse/tables.ts';
import { startBenchServer } from './bench-server.ts';
import { machine, median, timeMs } from './bench-support.ts';
import { benchPipelineOptions, ENGINE_INSERT as INSERT, engineInsert, freshBodies, warmPipeline } from './ingest-support.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    records: { type: 'string' },
    out: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string' },
    workers: { type: 'string' },
    skip: { type: 'string' },
  },
});
/** Round cases left out (--skip signature-index,workers): each costs the shared machine a run. */
const SKIP = new Set((values.skip ?? '').split(',').filter((x) => x !== ''));
const WORKERS = Number(values.workers ?? 2);
const ROUNDS = Number(values.rounds ?? 1);
const ROWS = Number(values.rows ?? 1_000_000);
const RECORDS = Number(values.records ?? 40_000);
const say = (s: string): void => void process.stderr.write(`${s}\n`);

/** The base table's insert columns with their types, in BASE_COLUMNS order (a staged file's structure). */
const TYPES: Record<string, string> = {
  signature: 'String',
  instruction_index: 'UInt16',
  // Migration 110: the record id's position (EPHEMERAL: read to compute rid, not stored).
  transaction_index: 'UInt32',
  slot: 'UInt64',
  block_time: 'UInt32',
  program_id: 'String',
  protocol_name: 'String',
  instruction_type: 'String',
  fee: 'UInt64',
  compute_units: 'UInt32',
  accounts: 'Array(String)',
  accounts_count: 'UInt16',
  success: 'Bool',
  error_message: 'String',
  log_messages: 'String',
  raw_data: 'String',
};
const STRUCTURE = BASE_COLUMNS.map((c) => `${c} ${TYPES[c]}`).join(', ');

/** RowBinary of base rows in BASE_COLUMNS order (String = varint length + bytes). */
export function rowBinary(rows: readonly BaseRow[]): Buffer {
  let buf = Buffer.allocUnsafe(1 << 20);
  let off = 0;
  const ensure = (n: number): void => {
    if (off + n <= buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(buf.length * 2, off + n));
    buf.copy(next, 0, 0, off);
    buf = next;
  };
  const varint = (v: number): void => {
    ensure(10);
    while (v >= 0x80) {
      buf[off++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    buf[off++] = v;
  };
  const str = (s: string): void => {
    const n = Buffer.byteLength(s);
    varint(n);
    ensure(n);
    off += buf.write(s, off);
  };
  for (const r of rows) {
    str(r.signature);
    ensure(2 + 4 + 8 + 4);
    off = buf.writeUInt16LE(r.instruction_index, off);
    off = buf.writeUInt32LE(r.transaction_index ?? 0, off);
    off = buf.writeBigUInt64LE(BigInt(r.slot), off);
    off = buf.writeUInt32LE(r.block_time, off);
    str(r.program_id);
    str(r.protocol_name);
    str(r.instruction_type);
    ensure(8 + 4);
    off = buf.writeBigUInt64LE(BigInt(r.fee), off);
    off = buf.writeUInt32LE(r.compute_units, off);
    varint(r.accounts.length);
    for (const a of r.accounts) str(a);
    ensure(3);
    off = buf.writeUInt16LE(r.accounts_count, off);
    buf[off++] = r.success ? 1 : 0;
    str(r.error_message);
    str(r.log_messages);
    str(r.raw_data);
  }
  return buf.subarray(0, off);
}

async function main(): Promise<void> {
  process.env.ADMIN_TOKEN ??= 'bench-admin-token-0123456789abcdef';
  const server = await startBenchServer(ROWS);
  const { wh, registry } = server.services;
  // A seed per run and case: a reused store (DATA_DIR) never sees the same records twice.
  const fresh = freshBodies(wh, RECORDS);
  const known = protocolLookup(await registry.list());
  const parsed = (nd: string): BaseRow[] =>
    nd
      .trim()
      .split('\n')
      .map((l) => {
        const c = checkRecord(JSON.parse(l), known);
        if (!c.ok) throw new Error(c.detail);
        return c.row;
      });
  const rate = (ms: number): number => Math.round(RECORDS / (ms / 1000));
  const results: Record<string, { ms: number; buildMs?: number; insertMs?: number; recordsPerSec: number; note?: string }> = {};
  const record = (name: string, r: { ms: number; buildMs?: number; insertMs?: number; note?: string }): void => {
    results[name] = { ...r, recordsPerSec: rate(r.ms) };
    say(
      `${name.padEnd(26)} ${rate(r.ms).toLocaleString('en-US').padStart(9)} records/s  ${r.ms.toFixed(0)} ms${r.buildMs === undefined ? '' : ` (build ${r.buildMs.toFixed(0)} ms, insert ${r.insertMs!.toFixed(0)} ms)`}${r.note ? `  ${r.note}` : ''}`,
    );
  };
  const want = (name: string): boolean => values.only === undefined || values.only.split(',').some((o) => name.startsWith(o));
  const ceiling = async (name: string): Promise<void> => {
    const bytes = Buffer.from(await fresh());
    record(name, { ms: await timeMs(() => engineInsert(wh, bytes)) });
  };

  say(`store: ${ROWS.toLocaleString('en-US')} rows; ${RECORDS.toLocaleString('en-US')} fresh records per case; ${machine()}`);
  await ceiling('ceiling (first)');

  if (want('path')) {
    const timed = async (
      name: string,
      build: (nd: string, rows: BaseRow[]) => Buffer | Promise<Buffer>,
      insert: (b: Buffer) => Promise<void>,
    ): Promise<void> => {
      const nd = await fresh();
      const rows = parsed(nd);
      let payload!: Buffer;
      const buildMs = await timeMs(async () => void (payload = await build(nd, rows)));
      const insertMs = await timeMs(() => insert(payload));
      record(name, { ms: buildMs + insertMs, buildMs, insertMs });
    };
    const jsonInsert = (b: Buffer): Promise<void> => engineInsert(wh, b);
    await timed(
      'path: JSON.stringify rows',
      (_nd, rows) => {
        let s = '';
        for (const r of rows) s += `${JSON.stringify(r)}\n`;
        return Buffer.from(s);
      },
      jsonInsert,
    );
    await timed(
      'path: original lines',
      (nd) => {
        const lines = nd.split('\n');
        let s = '';
        for (const l of lines) if (l.length > 0) s += `${l}\n`;
        return Buffer.from(s);
      },
      jsonInsert,
    );
    await timed(
      'path: JSONCompactEachRow',
      (_nd, rows) => {
        let s = '';
        for (const r of rows) s += `${JSON.stringify(BASE_COLUMNS.map((c) => r[c]))}\n`;
        return Buffer.from(s);
      },
      (b) => wh.insertBytes(TABLES.transactions, b, 'JSONCompactEachRow', INSERT),
    );
    // chDB 3.4 takes only text formats as insert data (its raw insert refuses RowBinary and
    // Native), so binary rows reach the engine as a staged file, which a server transport
    // would instead receive as the request body.
    const dir = mkdtempSync(path.join(tmpdir(), 'txa-stage-'));
    try {
      const structure = STRUCTURE;
      const fromFile = (format: string) => (): Promise<void> =>
        wh.exec(`INSERT INTO ${TABLES.transactions} (${BASE_COLUMNS.join(', ')}) SELECT * FROM file({f:String}, {fmt:String}, {s:String})`, {
          params: { f: path.join(dir, `batch.${format}`), fmt: format, s: structure },
          settings: { parallel_view_processing: 1 },
        });
      await timed(
        'path: RowBinary (JS, file)',
        (_nd, rows) => {
          writeFileSync(path.join(dir, 'batch.RowBinary'), rowBinary(rows));
          return Buffer.alloc(0);
        },
        fromFile('RowBinary'),
      );
      await timed(
        'path: staged NDJSON file',
        (nd) => {
          writeFileSync(path.join(dir, 'batch.JSONEachRow'), nd);
          return Buffer.alloc(0);
        },
        fromFile('JSONEachRow'),
      );
    } catch (err) {
      say(`path: staged file failed: ${(err as Error).message.slice(0, 300)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const log = createLogger('silent');
  const opts = benchPipelineOptions(server.services);
  // Each pipeline's prepare (the journal's repair check) is timed apart, then one small
  // ingest warms the JIT.
  const warm = (p: IngestPipeline, name: string): Promise<void> => warmPipeline(p, name, fresh, say);
  if (want('pipeline')) {
    for (const [name, raw] of [
      ['pipeline: as received', true],
      ['pipeline: re-serialised', false],
    ] as const) {
      const p = new IngestPipeline(wh, registry, server.services.dataVersion, log, { ...opts, rawInsert: raw });
      await warm(p, name);
      const body = Buffer.from(await fresh());
      let accepted = 0;
      const ms = await timeMs(async () => void ({ accepted } = await p.ingest(ndjsonRecords(body), 'bench')));
      if (accepted !== RECORDS) throw new Error(`${name}: accepted ${accepted} of ${RECORDS}`);
      record(name, { ms, note: `batch ${opts.batchRows}` });
    }
  }
  if (want('http')) {
    const body = Buffer.from(await fresh());
    let answer: { accepted: number } | undefined;
    const ms = await timeMs(async () => {
      const res = await fetch(`${server.baseUrl}/admin/ingest`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      answer = (await res.json()) as { accepted: number };
    });
    if (answer?.accepted !== RECORDS) throw new Error(`http: ${JSON.stringify(answer).slice(0, 300)}`);
    record('http: POST /admin/ingest', { ms });
  }
  await ceiling('ceiling (last)');

  // Rounds: the same comparison repeated, each ratio within its round.
  const roundRatios: Record<string, number>[] = [];
  const stageDir = mkdtempSync(path.join(tmpdir(), 'txa-stage-'));
  if (ROUNDS > 0 && values.rounds !== undefined) {
    // Start to first accepted record (issue 40): a new pipeline, as a process start makes it,
    // until its first record is stored; nothing of the store is read whole.
    const first = ndjsonRecords(await fresh(1));
    const startMs = await timeMs(async () => {
      const fresh1 = new IngestPipeline(wh, registry, server.services.dataVersion, log, opts);
      await fresh1.prepare();
      const rep = await fresh1.ingest(first, 'bench-start');
      if (rep.accepted !== 1) throw new Error(`start: accepted ${rep.accepted}`);
    });
    say(`start to first accepted record: ${startMs.toFixed(0)} ms (store of ${ROWS.toLocaleString('en-US')} rows)`);
    results['start to first record'] = { ms: startMs, recordsPerSec: 0 };
    const p = new IngestPipeline(wh, registry, server.services.dataVersion, log, opts);
    await warm(p, 'rounds pipeline');
    const inEngine = new IngestPipeline(wh, registry, server.services.dataVersion, log, { ...opts, checks: 'engine' });
    await warm(inEngine, 'rounds pipeline, checks in the engine');
    await inEngine.ingestNdjson(Buffer.from(await fresh(2000)), 'bench-warm');
    const unfiltered = new IngestPipeline(wh, registry, server.services.dataVersion, log, { ...opts, dedupe: 'signature-index' });
    await warm(unfiltered, 'rounds pipeline, de-duplication by the signature index');
    const onWorkers = new IngestPipeline(wh, registry, server.services.dataVersion, log, { ...opts, parseWorkers: WORKERS });
    await warm(onWorkers, `rounds pipeline on ${WORKERS} parse workers`);
    while (onWorkers.parseWorkersReady < WORKERS) await new Promise((r) => setTimeout(r, 50));
    await onWorkers.ingest(ndjsonRecords(await fresh(4000)), 'bench-warm');
    // The service's pipeline starts its parse workers on its first large call: started here.
    const served = server.services.pipeline;
    await served.prepare();
    for (let t = 0; t < 200 && served.parseWorkersReady < server.services.config.ingest.parseWorkers; t++) await new Promise((r) => setTimeout(r, 50));
    say(`http: POST /admin/ingest with INGEST_PARSE_WORKERS=${server.services.config.ingest.parseWorkers} (${served.parseWorkersReady} ready)`);
    const structure = STRUCTURE;
    for (let r = 0; r < ROUNDS; r++) {
      const load = loadavg()[0]!;
      const rate1 = async (fn: (b: Buffer<ArrayBuffer>) => Promise<unknown>): Promise<number> => {
        const b = Buffer.from(await fresh());
        return rate(await timeMs(() => fn(b)));
      };
      const buffer = await rate1((b) => engineInsert(wh, b));
      const file = await rate1(async (b) => {
        const f = path.join(stageDir, 'batch.ndjson');
        writeFileSync(f, b);
        await wh.exec(`INSERT INTO ${TABLES.transactions} (${BASE_COLUMNS.join(', ')}) SELECT * FROM file({f:String}, 'JSONEachRow', {s:String})`, {
          params: { f, s: structure },
          settings: INSERT.settings,
        });
      });
      const pipe = await rate1(async (b) => {
        const rep = await p.ingest(ndjsonRecords(b), 'bench');
        if (rep.accepted !== RECORDS) throw new Error(`pipeline accepted ${rep.accepted}`);
      });
      // Checks in the engine (migration 121; INGEST_CHECKS=engine): the body's lines to the
      // engine, checked, journalled and routed there; nothing parsed in JavaScript.
      const engine = await rate1(async (b) => {
        const rep = await inEngine.ingestNdjson(b, 'bench');
        if (rep.accepted !== RECORDS) throw new Error(`engine checks accepted ${rep.accepted}`);
      });
      const noFilter = SKIP.has('signature-index')
        ? 0
        : await rate1(async (b) => {
            const rep = await unfiltered.ingest(ndjsonRecords(b), 'bench');
            if (rep.accepted !== RECORDS) throw new Error(`pipeline accepted ${rep.accepted}`);
          });
      const workersBefore = onWorkers.recordsParsedOnWorkers;
      const pipeW = SKIP.has('workers')
        ? 0
        : await rate1(async (b) => {
            const rep = await onWorkers.ingest(ndjsonRecords(b), 'bench');
            if (rep.accepted !== RECORDS) throw new Error(`pipeline on workers accepted ${rep.accepted}`);
          });
      if (!SKIP.has('workers') && onWorkers.recordsParsedOnWorkers - workersBefore !== RECORDS)
        say(`  (only ${onWorkers.recordsParsedOnWorkers - workersBefore} records were parsed on the workers)`);
      const http = await rate1(async (b) => {
        const res = await fetch(`${server.baseUrl}/admin/ingest`, {
          method: 'POST',
          body: b,
          headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
        });
        const answer = (await res.json()) as { accepted: number };
        if (answer.accepted !== RECORDS) throw new Error(`http: ${JSON.stringify(answer).slice(0, 300)}`);
      });
      // A buffer insert right after, so each side has the engine measured around it.
      const buffer2 = await rate1((b) => engineInsert(wh, b));
      const bufferMean = (buffer + buffer2) / 2;
      const best = Math.max(bufferMean, file);
      const rr = {
        load,
        buffer,
        buffer2,
        file,
        pipeline: pipe,
        noFilter,
        pipelineWorkers: pipeW,
        http,
        engine,
        'engine/buffer': engine / bufferMean,
        'engine/http': engine / http,
        'engine/pipeline': engine / pipe,
        'noFilter/buffer': noFilter / bufferMean,
        'pipeline/buffer': pipe / bufferMean,
        'pipelineWorkers/buffer': pipeW / bufferMean,
        'http/buffer': http / bufferMean,
        'pipeline/best': pipe / best,
        'pipelineWorkers/best': pipeW / best,
        'http/best': http / best,
      };
      roundRatios.push(rr);
      say(
        `round ${r + 1}/${ROUNDS} (load ${load.toFixed(1)} on ${availableParallelism()} cores): engine buffer ${buffer.toLocaleString('en-US')}/${buffer2.toLocaleString('en-US')}, file ${file.toLocaleString('en-US')}, ` +
          `pipeline ${pipe.toLocaleString('en-US')} (by the signature index ${noFilter.toLocaleString('en-US')}, on ${WORKERS} workers ${pipeW.toLocaleString('en-US')}), http ${http.toLocaleString('en-US')} records/s; ` +
          `pipeline ${rr['pipeline/buffer'].toFixed(2)} of buffer, ${rr['pipeline/best'].toFixed(2)} of best; on workers ${rr['pipelineWorkers/buffer'].toFixed(2)} / ${rr['pipelineWorkers/best'].toFixed(2)}; ` +
          `http ${rr['http/buffer'].toFixed(2)} of buffer, ${rr['http/best'].toFixed(2)} of best; ` +
          `engine checks ${engine.toLocaleString('en-US')} records/s, ${rr['engine/buffer'].toFixed(2)} of buffer, ${rr['engine/pipeline'].toFixed(2)} of the JavaScript pipeline, ${rr['engine/http'].toFixed(2)} of http`,
      );
    }
    const med = (k: string): number => median(roundRatios.map((x) => x[k]!));
    say(
      `medians over ${ROUNDS} rounds: pipeline ${med('pipeline/buffer').toFixed(2)} of the buffer insert, ${med('pipeline/best').toFixed(2)} of the best engine path; ` +
        `by the signature index ${med('noFilter/buffer').toFixed(2)}; on ${WORKERS} parse workers ${med('pipelineWorkers/buffer').toFixed(2)} / ${med('pipelineWorkers/best').toFixed(2)}; POST /admin/ingest ${med('http/buffer').toFixed(2)} / ${med('http/best').toFixed(2)}; engine checks ${med('engine/buffer').toFixed(2)} of buffer, ${med('engine/pipeline').toFixed(2)} of the JavaScript pipeline, ${med('engine/http').toFixed(2)} of http; file/buffer ${median(roundRatios.map((x) => x.file! / ((x.buffer! + x.buffer2!) / 2))).toFixed(2)}`,
    );
  }
  rmSync(stageDir, { recursive: true, force: true });

  const ceil = (results['ceiling (first)']!.recordsPerSec + results['ceiling (last)']!.recordsPerSec) / 2;
  say(`\nratios to the engine's own insert of the same bytes (${Math.round(ceil).toLocaleString('en-US')} records/s, mean of first and last):`);
  const ratios: Record<string, number> = {};
  for (const [k, v] of Object.entries(results)) {
    ratios[k] = Number((v.recordsPerSec / ceil).toFixed(2));
    say(`  ${k.padEnd(26)} ${ratios[k]!.toFixed(2)}`);
  }
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    rows: ROWS,
    records: RECORDS,
    ceilingRecordsPerSec: Math.round(ceil),
    results,
    ratios,
    rounds: roundRatios,
  };
  if (values.out) {
    mkdirSync(path.dirname(values.out), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
  }
  console.log(JSON.stringify(report));
  await server.close();
}

await main();
