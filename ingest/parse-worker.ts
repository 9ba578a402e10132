// A parse worker (ingest/parse-pool.ts starts them): runs parseRecord over a chunk of
// received records and answers with what the main thread needs, packed (typed arrays
// transferred, strings cloned): each record's outcome, its identity (signature, index),
// protocol and block time, its sig_key halves; the normalised row only for a record whose
// own text does not store as received (the main thread rebuilds the others' rows from their
// text if it ever needs them); a refusal's code and message. The payload and the line handed
// to the engine are taken on the main thread from the records it already holds.
import { parentPort, type MessagePort } from 'node:worker_threads';
import { cityHasher } from './city-hash.ts';
import { parseRecord, type RecordContext } from './parse-record.ts';
import { protocolLookup } from './record-schema.ts';
import type { ParseReply, ParseTask } from './parse-pool.ts';
import { OK_AS_RECEIVED, OK_ROW, DEAD } from './parse-pool.ts';

const port = parentPort;
if (port === null) throw new Error('parse-worker.ts runs as a worker thread');

/** Answer chunks on this port; the thread's hasher is created once, here, for every chunk. */
function serve(port: MessagePort): void {
  const hasher = cityHasher();
  port.on('message', (task: ParseTask) => {
    const known = protocolLookup(task.known.map(([protocolName, programId]) => ({ protocolName, programId })));
    const ctx: RecordContext = { maxRecordBytes: task.maxRecordBytes, known, hasher };
    const protoIndex = new Map(task.known.map(([name], i) => [name, i]));
    const packed = task.packed === undefined ? undefined : Buffer.from(task.packed.bytes);
    const n = task.texts?.length ?? task.packed!.ends.length;
    const status = new Uint8Array(n);
    const ix = new Uint16Array(n);
    const proto = new Uint16Array(n);
    const bt = new Float64Array(n);
    const kh = new Uint32Array(n);
    const kl = new Uint32Array(n);
    const sigs: string[] = [];
    const rows: ParseReply['rows'] = [];
    const dead: string[] = [];
    let start = 0;
    for (let i = 0; i < n; i++) {
      let value: string | Uint8Array;
      if (packed === undefined) {
        value = task.texts![i]!;
      } else {
        const end = task.packed!.ends[i]!;
        value = packed.subarray(start, end);
        start = end;
      }
      const result = parseRecord(value, ctx);
      if (result.kind !== 'ok') {
        status[i] = DEAD;
        dead.push(result.code, result.reason);
        continue;
      }
      const p = result.value;
      status[i] = p.asReceived ? OK_AS_RECEIVED : OK_ROW;
      if (!p.asReceived) rows.push(p.row);
      sigs.push(p.row.signature);
      ix[i] = p.row.instruction_index;
      proto[i] = protoIndex.get(p.row.protocol_name)!;
      bt[i] = p.row.block_time;
      kh[i] = p.kh;
      kl[i] = p.kl;
    }
    const reply: ParseReply = { id: task.id, status, ix, proto, bt, kh, kl, sigs, rows, dead };
    port.postMessage(reply, [status.buffer, ix.buffer, proto.buffer, bt.buffer, kh.buffer, kl.buffer]);
  });
  port.postMessage({ ready: true });
}

serve(port);
