// JSON text of a large value written in chunks, a turn of the event loop apart, so writing
// a big answer never holds the loop for long (JSON.stringify of 70 MB held it for seconds,
// and every other request waited). Any door can stream an answer with it; the GraphQL door
// does (api/doors/graphql/answer-stream.ts). The text is what JSON.stringify(value) would give.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ANSWER_CHUNK_BYTES } from '../../../core/limits/answers.ts';

export interface ChunkOptions {
  /** UTF-16 units gathered before a chunk is handed out (about that many bytes); ANSWER_CHUNK_BYTES unless set. */
  chunkChars?: number;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;
/** A value JSON leaves out of an object (and writes as null in an array). */
const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** Whether an object holds no objects: then JSON.stringify writes it at once, cheaply (a record, a point). */
function flat(o: Json): boolean {
  for (const k in o) if (Object.hasOwn(o, k) && isObject(o[k])) return false;
  return true;
}

/**
 * The JSON text of `value` in small pieces: arrays element by element, objects holding
 * objects key by key, flat objects and scalars whole. `path` holds the objects being
 * written (a cycle is an error, as in JSON.stringify).
 */
function* pieces(value: unknown, key: string, path: Set<object>): Generator<string> {
  let v = value;
  if (isObject(v) && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(k: string): unknown }).toJSON(key);
  if (!isObject(v)) {
    yield omitted(v) ? 'null' : JSON.stringify(v);
    return;
  }
  if (path.has(v)) throw new TypeError('Converting circular structure to JSON');
  if (Array.isArray(v)) {
    path.add(v);
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      yield* pieces(v[i], String(i), path);
    }
    yield ']';
    path.delete(v);
    return;
  }
  const o = v as Json;
  if (flat(o)) {
    yield JSON.stringify(o);
    return;
  }
  path.add(o);
  yield '{';
  let first = true;
  for (const k of Object.keys(o)) {
    const item = o[k];
    if (omitted(item)) continue;
    yield `${first ? '' : ','}${JSON.stringify(k)}:`;
    first = false;
    yield* pieces(item, k, path);
  }
  yield '}';
  path.delete(o);
}

/**
 * The JSON text of `value` (as JSON.stringify(value) writes it; undefined as "null") in
 * chunks of about `chunkChars` UTF-16 units. Each chunk after the first is built in a turn
 * of the event loop of its own, so other work runs between chunks.
 */
export async function* jsonChunks(value: unknown, options: ChunkOptions = {}): AsyncGenerator<string> {
  const size = options.chunkChars ?? ANSWER_CHUNK_BYTES;
  let buffer = '';
  for (const piece of pieces(value, '', new Set())) {
    buffer += piece;
    if (buffer.length >= size) {
      yield buffer;
      buffer = '';
      await nextTurn();
    }
  }
  if (buffer.length > 0) yield buffer;
}

/** The whole text of jsonChunks(value), for tests and small values. */
export async function chunkedStringify(value: unknown, options: ChunkOptions = {}): Promise<string> {
  let out = '';
  for await (const chunk of jsonChunks(value, options)) out += chunk;
  return out;
}
