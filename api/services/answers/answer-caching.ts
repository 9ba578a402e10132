// HTTP caching of answers (docs/browser-clients.md, "Caching"). A GET answer of the REST and
// GraphQL doors carries a weak ETag made from the data version (what the result cache keys its
// entries by: new rows in this process, a registry change, and the newest ingest time, which
// also moves when another process writes) together with the request itself (path, query
// without the key, the caller's key). A request whose If-None-Match names the current tag is
// answered 304 before any statement runs. Cache-Control says how long an answer stays fresh:
// `private` (it belongs to the caller's key) for ANSWER_MAX_AGE_SECONDS, the result cache's own
// staleness bound; after that a client revalidates with the tag. `Vary` names every request
// header that chose the answer (vary.ts), so no cache hands one key's answer to another.
//
// Weak tags: the same answer may be sent gzip, brotli or plain (compression.ts), and the tag
// names the data, not the bytes. POST answers (JSON-RPC, SQL, POST /graphql), errors and
// everything else of the API doors say `no-store`, unless a route set its own (downloads,
// the API descriptions).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ANSWER_MAX_AGE_SECONDS, ETAG_DIGEST_CHARS } from '../../../core/limits/http.ts';
import { isApiDoorPath } from '../access/cors.ts';
import { pathOf, policyOf } from '../access/route-policy.ts';
import type { EdgeStep } from './answer-edge.ts';
import { appendVary, CACHEABLE_ANSWER_VARY } from './vary.ts';

/** The URL without the api-key query parameter (a secret, and no part of what is asked). */
function withoutKey(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  params.delete('api-key');
  params.sort();
  const rest = params.toString();
  return rest === '' ? url.slice(0, q) : `${url.slice(0, q)}?${rest}`;
}

/** Whether If-None-Match (a list of tags, or *) matches `tag` by weak comparison. */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const opaque = (t: string): string => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === opaque(tag));
}

/** GraphQL fields whose answers move without the data version: export jobs (status, progress,
 *  fresh links). A document that names one is not tagged (a field cannot be selected without
 *  its name appearing in the text, aliases and fragments included; a mere mention fails safe). */
const UNVERSIONED_GRAPHQL = /exportJob/;

/** Whether a request's answer is one the data version names: a data GET of REST or GraphQL. */
function taggable(req: FastifyRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const route = req.routeOptions.url;
  if (route === undefined || req.apiKey === null) return false;
  if (route === '/graphql') {
    const query = (req.query as Record<string, unknown> | undefined)?.query;
    return typeof query === 'string' && !UNVERSIONED_GRAPHQL.test(query);
  }
  const policy = policyOf(req);
  return policy.interface === 'rest' && policy.door === 'rest';
}

/** `version()`: the data version, changing whenever an answer given before may differ now.
 *  Installs the 304 check; returns the answer edge's step (answer-edge.ts) of the headers. */
export function installAnswerCaching(app: FastifyInstance, version: () => string): EdgeStep {
  const tags = new WeakMap<FastifyRequest, string>();
  // After authentication (the tag is the caller's) and before the handler (a 304 runs nothing).
  app.addHook('preHandler', (req, reply, done) => {
    if (!taggable(req)) return done();
    // The key and its plan: GraphQL's extensions.cost states the plan's budget.
    const digest = createHash('sha256')
      .update(`${version()}\n${req.apiKey?.id ?? ''}.${req.apiKey?.plan ?? ''}\n${withoutKey(req.url)}`)
      .digest('base64url')
      .slice(0, ETAG_DIGEST_CHARS);
    const tag = `W/"${digest}"`;
    tags.set(req, tag);
    const inm = req.headers['if-none-match'];
    if (noneMatch(typeof inm === 'string' ? inm : undefined, tag)) {
      // Answered here: a callback hook that replies does not call done.
      void reply.code(304).header('etag', tag).header('cache-control', `private, max-age=${ANSWER_MAX_AGE_SECONDS}`).send();
      return;
    }
    done();
  });
  return (req, reply, payload) => {
    if (!isApiDoorPath(pathOf(req.url))) return payload;
    const tag = tags.get(req);
    if (tag !== undefined && (reply.statusCode === 200 || reply.statusCode === 304)) {
      reply.header('etag', tag).header('cache-control', `private, max-age=${ANSWER_MAX_AGE_SECONDS}`);
      // Stored answers are kept apart by every header that chose them, the caller's key first (vary.ts).
      appendVary(reply, ...CACHEABLE_ANSWER_VARY);
    } else if (reply.getHeader('cache-control') === undefined) {
      reply.header('cache-control', 'no-store');
    }
    return payload;
  };
}
