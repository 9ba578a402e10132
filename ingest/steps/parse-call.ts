// The record steps (ingest/parse-record.ts) over one ingest call's records, in order: on
// the calling thread, or in chunks on the parse workers (ingest/parse-pool.ts), whose packed
// answers are unpacked here into the same Accepted records and refusals.
//
// With parse workers, chunks of INGEST_PARSE_CHUNK records are parsed on them, INGEST_CHUNKS_PER_WORKER per
// worker ahead, and taken back in order: the main thread's share shrinks to assembling the
// answers, and the rest runs on another core. On the calling thread, parsing yields to the
// event loop every INGEST_PARSE_SLICE records while a write is in hand, so the writer's steps run
// without waiting for the whole call to be parsed.
import { DEAD, OK_ROW, type ParsePool, type ParseReply, type ParseTask } from '../parse-pool.ts';
import { parseRecord, type RecordContext } from '../parse-record.ts';
import { INGEST_CHUNKS_PER_WORKER, INGEST_PARSE_CHUNK, INGEST_PARSE_SLICE } from '../../core/limits/ingest.ts';
import type { RejectionCode } from '../rejection.ts';
import { rawLine, type Accepted, type RawRecord } from './records.ts';

/** Where the call's parsed records go, in order. */
export interface ParsedSink {
  /** A record that passed every record step. */
  ok(a: Accepted): void;
  /** A record a step refused. */
  deadLetter(rec: RawRecord, code: RejectionCode, reason: string): void;
  /** The call stopped (a write of it failed): parse no further. */
  stopped(): boolean;
  /** A write is in hand: yield to it now and then. */
  writing(): boolean;
  /** These many records were answered by a parse worker (tests and benchmarks check the workers were used). */
  parsedOnWorkers(n: number): void;
}

/** Run the record steps over the call's records, handing each result to the sink in order. */
export async function parseCall(
  records: readonly RawRecord[],
  ctx: RecordContext,
  entries: readonly { protocolName: string; programId: string }[],
  pool: ParsePool | undefined,
  sink: ParsedSink,
): Promise<void> {
  const inThread = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i++) {
      if (sink.stopped()) break;
      const rec = records[i]!;
      const result = parseRecord(rec.value, ctx);
      if (result.kind === 'ok') {
        const { row, kh, kl } = result.value;
        const line = result.value.asReceived ? rawLine(rec.value as string | Uint8Array) : undefined;
        sink.ok({
          signature: row.signature,
          instruction_index: row.instruction_index,
          protocol_name: row.protocol_name,
          block_time: row.block_time,
          row,
          line,
          kh,
          kl,
        });
      } else {
        sink.deadLetter(rec, result.code, result.reason);
      }
      if (i % INGEST_PARSE_SLICE === INGEST_PARSE_SLICE - 1 && sink.writing()) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  if (records.length >= INGEST_PARSE_CHUNK) pool?.start();
  const workers = pool?.readyWorkers ?? 0;
  if (pool === undefined || workers === 0 || records.length < INGEST_PARSE_CHUNK) {
    await inThread(0, records.length);
    return;
  }
  const pairs: [string, string][] = entries.map((e) => [e.protocolName, e.programId]);
  const chunks = Math.ceil(records.length / INGEST_PARSE_CHUNK);
  const ahead: Promise<ParseReply | undefined>[] = [];
  const send = (c: number): Promise<ParseReply | undefined> => {
    const task = parseTask(records, c * INGEST_PARSE_CHUNK, Math.min(records.length, (c + 1) * INGEST_PARSE_CHUNK));
    // A chunk a worker cannot take (mixed or parsed values) or could not parse (it failed)
    // is parsed here instead: the same function, the same answers.
    if (task === undefined) return Promise.resolve(undefined);
    return pool.parse({ ...task, known: pairs, maxRecordBytes: ctx.maxRecordBytes }).catch(() => undefined);
  };
  let sent = 0;
  while (sent < chunks && sent < workers * INGEST_CHUNKS_PER_WORKER) ahead.push(send(sent++));
  for (let c = 0; c < chunks; c++) {
    if (sink.stopped()) break;
    const reply = await ahead[c]!;
    if (sent < chunks) ahead.push(send(sent++));
    const from = c * INGEST_PARSE_CHUNK;
    const to = Math.min(records.length, from + INGEST_PARSE_CHUNK);
    if (reply === undefined) {
      await inThread(from, to);
      continue;
    }
    sink.parsedOnWorkers(to - from);
    unpack(reply, records, from, to, pairs, sink);
  }
  // A call stopped by a failure leaves its chunks in flight to finish unobserved (send
  // catches their failures).
}

/** A worker's answer for records [from, to) to the sink, as parsing them here would have. */
function unpack(reply: ParseReply, records: readonly RawRecord[], from: number, to: number, pairs: readonly [string, string][], sink: ParsedSink): void {
  let s = 0;
  let r = 0;
  let d = 0;
  for (let i = from; i < to; i++) {
    const k = i - from;
    const rec = records[i]!;
    const status = reply.status[k]!;
    if (status === DEAD) {
      sink.deadLetter(rec, reply.dead[d]! as RejectionCode, reply.dead[d + 1]!);
      d += 2;
      continue;
    }
    const signature = reply.sigs[s++]!;
    if (status === OK_ROW) {
      const row = reply.rows[r++]!;
      sink.ok({
        signature,
        instruction_index: row.instruction_index,
        protocol_name: row.protocol_name,
        block_time: row.block_time,
        row,
        kh: reply.kh[k]!,
        kl: reply.kl[k]!,
      });
    } else {
      sink.ok({
        signature,
        instruction_index: reply.ix[k]!,
        protocol_name: pairs[reply.proto[k]!]![0],
        block_time: reply.bt[k]!,
        line: rawLine(rec.value as string | Uint8Array),
        kh: reply.kh[k]!,
        kl: reply.kl[k]!,
      });
    }
  }
}

/** A worker's task for records [from, to): all texts, or all bytes packed into one transferred buffer; otherwise none. */
function parseTask(records: readonly RawRecord[], from: number, to: number): Pick<ParseTask, 'texts' | 'packed'> | undefined {
  const first = records[from]!.value;
  if (typeof first === 'string') {
    const texts: string[] = [];
    for (let i = from; i < to; i++) {
      const v = records[i]!.value;
      if (typeof v !== 'string') return undefined;
      texts.push(v);
    }
    return { texts };
  }
  if (!(first instanceof Uint8Array)) return undefined;
  let total = 0;
  for (let i = from; i < to; i++) {
    const v = records[i]!.value;
    if (!(v instanceof Uint8Array)) return undefined;
    total += v.byteLength;
  }
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(to - from);
  let off = 0;
  for (let i = from; i < to; i++) {
    const v = records[i]!.value as Uint8Array;
    bytes.set(v, off);
    off += v.byteLength;
    ends[i - from] = off;
  }
  return { packed: { bytes, ends } };
}
