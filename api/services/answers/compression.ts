// Compressed answers (docs/browser-clients.md, "Compression"): gzip or brotli when the client
// accepts one (Accept-Encoding, q-values honoured; brotli preferred at equal weight), on JSON,
// CSV and NDJSON answers of at least COMPRESS_MIN_BYTES. A streamed answer stays streamed: the
// coder is a transform in its pipeline, each chunk goes out as the coder fills a block.
//
// Installed as the last root onSend hook, so it sees each answer as every other hook left it:
// in particular the door byte budgets (request-budget.ts, and each door's own check) count the
// answer BEFORE compression. That is on purpose: the budget bounds the work of building and
// sending an answer (rows read, JSON written, memory held), which compression does not shrink;
// a client that asks for gzip gets no larger answers than one that does not.
//
// Not compressed: file downloads (they answer byte ranges of a stored file, with a strong
// ETag of its bytes), answers already coded, 204/304, HEAD, and Server-Sent Events (hijacked
// streams never pass onSend; each event must reach the client at once).
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCEPT_ENCODING_MAX_ITEMS, COMPRESS_BROTLI_QUALITY, COMPRESS_GZIP_LEVEL, COMPRESS_MIN_BYTES } from '../../../core/limits/http.ts';
import { appendVary } from './vary.ts';

export type Coding = 'br' | 'gzip';

const COMPRESSIBLE = /^(application\/(json|x-ndjson|jsonl|graphql-response\+json|problem\+json)|text\/(csv|plain))\s*(;|$)/i;

const gzipOptions: ZlibOptions = { level: COMPRESS_GZIP_LEVEL };
const brotliOptions: BrotliOptions = {
  params: { [constants.BROTLI_PARAM_QUALITY]: COMPRESS_BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** The coding to answer with for an Accept-Encoding header, or undefined for none (identity). */
export function negotiateCoding(header: string | undefined): Coding | undefined {
  if (header === undefined || header === '') return undefined;
  const weights = new Map<string, number>();
  for (const part of header.split(',').slice(0, ACCEPT_ENCODING_MAX_ITEMS)) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name === undefined || name === '') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name, Number.isFinite(weight) ? Math.min(Math.max(weight, 0), 1) : 0);
  }
  const of = (c: string): number => weights.get(c) ?? (c === 'gzip' ? weights.get('x-gzip') : undefined) ?? weights.get('*') ?? 0;
  const br = of('br');
  const gz = of('gzip');
  if (br <= 0 && gz <= 0) return undefined;
  return br >= gz ? 'br' : 'gzip';
}

/** Whether this answer may be coded at all (whatever the client accepts). */
function codable(req: FastifyRequest, reply: FastifyReply): boolean {
  if (req.method === 'HEAD' || reply.statusCode === 204 || reply.statusCode === 304 || reply.statusCode < 200) return false;
  if (reply.getHeader('content-encoding') !== undefined) return false;
  // Byte ranges of a stored file stay ranges of that file.
  if (reply.getHeader('accept-ranges') !== undefined || reply.getHeader('content-range') !== undefined) return false;
  return COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''));
}

/** Install compression. Call after every other onSend hook is installed (it must run last). */
export function installCompression(app: FastifyInstance): void {
  // Callback style: every answer passes here, and most are not coded (an async hook would cost each a promise).
  app.addHook('onSend', (req, reply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    if (payload === null || payload === undefined || !codable(req, reply)) return done(null, payload);
    // The answer depends on Accept-Encoding from here on, coded or not.
    appendVary(reply, 'Accept-Encoding');
    const coding = negotiateCoding(typeof req.headers['accept-encoding'] === 'string' ? req.headers['accept-encoding'] : undefined);
    if (coding === undefined) return done(null, payload);
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
      if (bytes < COMPRESS_MIN_BYTES) return done(null, payload);
      // On the thread pool: a large answer does not hold the event loop while it is coded.
      (coding === 'br' ? brotliAsync(payload, brotliOptions) : gzipAsync(payload, gzipOptions)).then(
        (coded) => {
          reply.header('content-encoding', coding).header('content-length', String(coded.byteLength));
          done(null, coded);
        },
        (err: Error) => done(err),
      );
      return;
    }
    if (typeof (payload as Readable).pipe !== 'function') return done(null, payload);
    reply.header('content-encoding', coding).removeHeader('content-length');
    const coder = coding === 'br' ? createBrotliCompress(brotliOptions) : createGzip(gzipOptions);
    // pipeline: an error on either side (the answer cut by its budget) ends the coded stream too.
    done(
      null,
      pipeline(payload as Readable, coder, () => {}),
    );
  });
}
