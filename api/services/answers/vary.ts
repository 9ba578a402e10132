// The Vary header of answers a cache may keep (docs/browser-clients.md, "Caching"). A cached
// answer belongs to the request headers that chose it: the caller's key (x-api-key, or
// Authorization: Bearer on the routes that take it; ?api-key= is part of the URL, which every
// cache keys by), and the answer's form (Accept picks GraphQL's media type, Accept-Encoding the
// coding). Without them a browser's cache could answer one key's request with another key's
// answer to the same URL (a page switching keys, a shared machine).
import type { FastifyReply } from 'fastify';

/** Request headers that select the caller. */
export const CALLER_HEADERS = ['x-api-key', 'Authorization'] as const;

/** Request headers that select the caller or the form of a cacheable API answer. */
export const CACHEABLE_ANSWER_VARY = [...CALLER_HEADERS, 'Accept', 'Accept-Encoding'] as const;

/** Add `names` to the answer's Vary (each once, whatever its case; `*` already covers all). */
export function appendVary(reply: FastifyReply, ...names: readonly string[]): void {
  const vary = reply.getHeader('vary');
  // Most answers vary by nothing yet (compression adds Accept-Encoding to every coded one): no list to build.
  if (vary === undefined && names.length === 1) {
    reply.header('vary', names[0]);
    return;
  }
  const list =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (list.includes('*')) return;
  const have = new Set(list.map((v) => v.toLowerCase()));
  for (const name of names) {
    if (have.has(name.toLowerCase())) continue;
    have.add(name.toLowerCase());
    list.push(name);
  }
  reply.header('vary', list.join(', '));
}
