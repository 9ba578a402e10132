// A GraphQL answer written out as a stream within its byte budget: `data` top-level field by
// top-level field in chunks (api/services/answers/chunked-json.ts), then `errors`, then `extensions`.
// A field whose part would take the answer past the budget is answered null with an error
// at its path, and so is every field after it (answers stay in order, as JSON-RPC answers a
// batch past its budget). A field is gathered whole before it is sent, so at most the
// budget is held; the answer cache gets the exact bytes of `data` of an answer that was not cut.
import { Readable } from 'node:stream';
import type { GraphQLFormattedError } from 'graphql';
import { jsonChunks } from '../../services/answers/chunked-json.ts';
import { Errors } from '../../../core/errors.ts';
import { ANSWER_CHUNK_BYTES, formatBytes } from '../../../core/limits/answers.ts';
import { GRAPHQL_ANSWER_TAIL_RESERVE_BYTES } from '../../../core/limits/graphql.ts';

export interface Answer {
  /** Absent for a request error; null when execution nulled it. */
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
  extensions: Record<string, unknown>;
}

export interface StreamOptions {
  budgetBytes: number;
  chunkBytes?: number;
  /** Called with the bytes of `data` once it was written whole (no field cut). */
  onData?: (data: Buffer) => void;
}

export const overBudgetMessage = (budget: number): string =>
  `this field's answer would take the response past its ${formatBytes(budget)} budget; ask for less ` +
  '(a smaller pagination.first, a shorter filters.dateRange, a coarser bucketBy, fewer metrics, fields or aliases per request)';

/** Each piece of the answer as bytes, the data gathered a top-level field at a time. */
async function* answerChunks(answer: Answer, o: StreamOptions): AsyncGenerator<Buffer> {
  const chunkChars = o.chunkBytes ?? ANSWER_CHUNK_BYTES;
  const errors = [...(answer.errors ?? [])];
  const kept: Buffer[] | undefined = o.onData === undefined ? undefined : [];
  let sent = 0;
  let keeping = false;
  const out = (text: string): Buffer => {
    const b = Buffer.from(text, 'utf8');
    sent += b.length;
    if (keeping) kept?.push(b);
    return b;
  };
  yield out('{');
  let cut = false;
  if (answer.data !== undefined) {
    yield out('"data":');
    keeping = true;
    if (answer.data === null) yield out('null');
    else {
      yield out('{');
      let first = true;
      for (const [key, value] of Object.entries(answer.data)) {
        if (value === undefined) continue;
        const head = `${first ? '' : ','}${JSON.stringify(key)}:`;
        first = false;
        const part: Buffer[] = [];
        let bytes = 0;
        if (!cut) {
          for await (const chunk of jsonChunks(value, { chunkChars })) {
            const b = Buffer.from(chunk, 'utf8');
            bytes += b.length;
            // Stop reading as soon as the field cannot fit: never more than the budget held.
            if (sent + Buffer.byteLength(head) + bytes + GRAPHQL_ANSWER_TAIL_RESERVE_BYTES > o.budgetBytes) {
              cut = true;
              break;
            }
            part.push(b);
          }
        }
        yield out(head);
        if (cut) {
          yield out('null');
          errors.push({ message: overBudgetMessage(o.budgetBytes), path: [key], extensions: { code: Errors.queryTooComplex.graphql } });
          continue;
        }
        for (const b of part) {
          sent += b.length;
          if (keeping) kept?.push(b);
          yield b;
        }
      }
      yield out('}');
    }
  }
  if (kept !== undefined && !cut && answer.data) o.onData?.(Buffer.concat(kept));
  const tail = `${answer.data === undefined ? '' : ','}${errors.length > 0 ? `"errors":${JSON.stringify(errors)},` : ''}"extensions":${JSON.stringify(answer.extensions)}}`;
  yield Buffer.from(tail, 'utf8');
}

/** The answer as a byte stream for Fastify's reply. */
export function answerStream(answer: Answer, options: StreamOptions): Readable {
  return Readable.from(answerChunks(answer, options), { objectMode: false });
}

/**
 * The whole answer as one text, when it fits the budget (undefined when it does not: the
 * stream then cuts the fields past it); `data` also as bytes, for the answer cache.
 */
export function onePieceAnswer(answer: Answer, budgetBytes: number): { text: string; data: Buffer | undefined } | undefined {
  const dataText = answer.data === undefined ? undefined : JSON.stringify(answer.data);
  const parts: string[] = [];
  if (dataText !== undefined) parts.push(`"data":${dataText}`);
  if (answer.errors !== undefined && answer.errors.length > 0) parts.push(`"errors":${JSON.stringify(answer.errors)}`);
  parts.push(`"extensions":${JSON.stringify(answer.extensions)}`);
  const text = `{${parts.join(',')}}`;
  if (Buffer.byteLength(text, 'utf8') > budgetBytes) return undefined;
  return { text, data: dataText === undefined ? undefined : Buffer.from(dataText, 'utf8') };
}

/** A remembered `data` written again with fresh extensions: bytes only, nothing serialised. */
export function rememberedStream(data: Buffer, extensions: Record<string, unknown>, chunkBytes = ANSWER_CHUNK_BYTES): Readable {
  async function* chunks(): AsyncGenerator<Buffer> {
    yield Buffer.from('{"data":');
    for (let at = 0; at < data.length; at += chunkBytes) yield data.subarray(at, at + chunkBytes);
    yield Buffer.from(`,"extensions":${JSON.stringify(extensions)}}`);
  }
  return Readable.from(chunks(), { objectMode: false });
}
