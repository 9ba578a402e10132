// What the manifest says of each export file (bytes, sha256, rows), taken in one read of the
// file on a worker thread.
//
// Why a worker and one pass: text exports are 4-6x the size of Parquet (6.5 GB of JSONL for
// 9.2M rows), and reading every file back on the event loop for its hash, then a second
// time through the engine for its row count, made CSV and JSONL jobs 0.62-0.68x of the
// engine's bare write (bench/RESULTS.md, issue 13). On a worker, the hash of chunk N runs on
// the other core while the engine writes chunk N+1, and the event loop stays free for
// serving. Rows are counted from the bytes being hashed (JSONL: lines; CSV: record ends
// outside quotes, less the header), and from the footer for Parquet, so no engine query is
// needed — which also makes the count right when a ClickHouse server wrote the rows (the
// engine's file() would look on the server's disk, not ours).
import { Worker } from 'node:worker_threads';
import type { ExportFormat } from './export-config.ts';

export interface FileFacts {
  bytes: number;
  sha256: string;
  rows: number;
}

// Plain JavaScript, evaluated by the worker: no TypeScript loader is needed in the thread.
const WORKER_SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { openSync, readSync, closeSync, fstatSync } = require('node:fs');
const NL = 10, QUOTE = 34;

// Record ends in a CSV buffer: newlines outside double quotes (a doubled quote inside a
// field toggles twice, so the state stays right). Positions of the next quote and newline
// are searched natively and reused, so a buffer is scanned once.
function csvCounter() {
  let inQuote = false, ends = 0;
  return {
    feed(buf) {
      let i = 0, q = buf.indexOf(QUOTE, 0), nl = -2;
      while (i < buf.length) {
        if (q !== -1 && q < i) q = buf.indexOf(QUOTE, i);
        if (inQuote) {
          if (q === -1) return;
          inQuote = false; i = q + 1; continue;
        }
        if (nl !== -1 && nl < i) nl = buf.indexOf(NL, i);
        if (nl !== -1 && (q === -1 || nl < q)) { ends++; i = nl + 1; continue; }
        if (q === -1) return;
        inQuote = true; i = q + 1;
      }
    },
    rows(lastByte) { return Math.max(0, ends + (lastByte !== -1 && lastByte !== NL ? 1 : 0) - 1); },
  };
}

function lineCounter() {
  let ends = 0;
  return {
    feed(buf) { for (let i = buf.indexOf(NL); i !== -1; i = buf.indexOf(NL, i + 1)) ends++; },
    rows(lastByte) { return ends + (lastByte !== -1 && lastByte !== NL ? 1 : 0); },
  };
}

// Thrift compact protocol, only as far as FileMetaData.num_rows (field 3, i64): every other
// field is skipped by its type.
function parquetRows(fd, size) {
  if (size < 12) throw new Error('not a Parquet file (too short)');
  const tail = Buffer.alloc(8);
  readSync(fd, tail, 0, 8, size - 8);
  if (tail.toString('latin1', 4) !== 'PAR1') throw new Error('not a Parquet file (no PAR1 footer)');
  const len = tail.readUInt32LE(0);
  if (len <= 0 || len > size - 12) throw new Error('not a Parquet file (bad footer length)');
  const b = Buffer.alloc(len);
  readSync(fd, b, 0, len, size - 8 - len);
  let p = 0;
  const byte = () => { if (p >= b.length) throw new Error('Parquet footer ends early'); return b[p++]; };
  const varint = () => { let r = 0n, s = 0n, x; do { x = byte(); r |= BigInt(x & 0x7f) << s; s += 7n; } while (x & 0x80); return r; };
  const zigzag = () => { const v = varint(); return (v >> 1n) ^ -(v & 1n); };
  const skip = (type, depth) => {
    if (depth > 64) throw new Error('Parquet footer nests too deep');
    switch (type) {
      case 1: case 2: return;
      case 3: p += 1; return;
      case 4: case 5: case 6: varint(); return;
      case 7: p += 8; return;
      case 8: { const n = Number(varint()); p += n; return; } // varint() moves p: read it first
      case 9: case 10: {
        const h = byte(); let n = h >> 4; const t = h & 15;
        if (n === 15) n = Number(varint());
        for (let i = 0; i < n; i++) { if (t === 1 || t === 2) p += 1; else skip(t, depth + 1); }
        return;
      }
      case 11: {
        const n = Number(varint()); if (n === 0) return;
        const h = byte();
        for (let i = 0; i < n; i++) { skip(h >> 4, depth + 1); skip(h & 15, depth + 1); }
        return;
      }
      case 12: struct(depth + 1, null); return;
      default: throw new Error('Parquet footer has an unknown thrift type ' + type);
    }
  };
  function struct(depth, want) {
    let id = 0;
    for (;;) {
      const h = byte();
      if (h === 0) return null;
      const delta = h >> 4, type = h & 15;
      id = delta !== 0 ? id + delta : Number(zigzag());
      if (want !== null && id === want && type === 6) return zigzag();
      skip(type, depth);
    }
  }
  const n = struct(0, 3);
  if (n === null) throw new Error('Parquet footer has no num_rows');
  return Number(n);
}

parentPort.on('message', ({ id, file, format }) => {
  let fd;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const hash = createHash('sha256');
    const counter = format === 'CSV' ? csvCounter() : format === 'JSONL' ? lineCounter() : null;
    const buf = Buffer.allocUnsafe(4 << 20);
    let n, last = -1;
    while ((n = readSync(fd, buf, 0, buf.length, null)) > 0) {
      const part = buf.subarray(0, n);
      hash.update(part);
      if (counter) counter.feed(part);
      last = part[n - 1];
    }
    const rows = counter ? counter.rows(last) : parquetRows(fd, size);
    parentPort.postMessage({ id, facts: { bytes: size, sha256: hash.digest('hex'), rows } });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
});
`;

type Reply = { id: number; facts?: FileFacts; error?: string };

/**
 * The worker thread that takes the facts: bytes, sha256 and row count of an export file, in
 * one read. Files are taken in order of request (one worker: hashing uses one core, the
 * engine the other). Started at the first file, and unreferenced while idle, so it never
 * keeps the process alive; each export service holds one.
 */
export class FileFactsWorker {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (f: FileFacts) => void; reject: (e: Error) => void }>();

  /** Bytes, sha256 and row count of an export file. */
  facts(file: string, format: ExportFormat): Promise<FileFacts> {
    const w = this.theWorker();
    w.ref();
    const id = this.nextId++;
    return new Promise<FileFacts>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.postMessage({ id, file, format });
    });
  }

  private theWorker(): Worker {
    if (this.worker !== null) return this.worker;
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.on('message', (r: Reply) => {
      const wait = this.waiting.get(r.id);
      if (wait === undefined) return;
      this.waiting.delete(r.id);
      if (r.facts !== undefined) wait.resolve(r.facts);
      else wait.reject(new Error(r.error ?? 'file facts failed'));
      if (this.waiting.size === 0) w.unref();
    });
    const fail = (err: Error): void => {
      this.worker = null;
      for (const wait of this.waiting.values()) wait.reject(err);
      this.waiting.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`file facts worker exited (${code})`)));
    this.worker = w;
    return w;
  }
}
