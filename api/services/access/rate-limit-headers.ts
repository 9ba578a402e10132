// X-RateLimit-* and Retry-After (SPEC "Limits") on every answer: from the request's latest limit
// decision (access-control.ts), or for an answer without one, the client address's keyless
// budget read without spending it; in two shapes, set on a reply (the answer edge) and as a
// list (answers written below Fastify, http-protocol.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Plan } from '../../../core/plans.ts';
import type { Access } from './access.ts';
import { PER_ADDRESS_PLAN } from './operator-auth.ts';
import type { RateDecision } from './rate-limiter.ts';

/** The per-IP counter of requests without a valid key. `req.ip` is the socket's peer
 *  address (trustProxy is off), the same as a bare socket's remoteAddress. */
export const anonymousSubject = (ip: string | undefined): string => `ip:${ip ?? ''}`;

/** X-RateLimit-* (and Retry-After on a refusal) for `req`'s answer: its latest limit
 *  decision, or, for a request answered without one (/health, the API description, a
 *  request refused while routing), its address's keyless budget, read without spending it.
 *  Exported for answers that bypass the onSend hooks (routing errors, see app.ts). */
export async function setRateLimitHeaders(access: Access, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const d = req.rateLimit ?? (await addressFigures(access, req.ip));
  if (d !== undefined) setDecisionHeaders(reply, d);
}

/** The rate-limit headers (SPEC's names), set on every answer in two shapes: straight onto a
 *  reply (the answer edge) and as a list (answers that bypass it, http-protocol.ts). */
const RATE_LIMIT_HEADERS = Object.freeze({
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
  plan: 'x-ratelimit-plan',
  retryAfter: 'retry-after',
} as const);

/** The last reset time written out: every answer of a window names the same one. */
export interface ResetText {
  at: number;
  text: string;
}

/** The headers of rateLimitHeaders set on `reply`, without building the list (every answer passes here). */
export function setDecisionHeaders(reply: FastifyReply, d: RateDecision & { plan: Plan }, last: ResetText = { at: NaN, text: '' }): void {
  if (last.at !== d.resetAt) {
    last.at = d.resetAt;
    last.text = new Date(d.resetAt).toISOString();
  }
  reply.header(RATE_LIMIT_HEADERS.limit, String(d.limit));
  reply.header(RATE_LIMIT_HEADERS.remaining, String(d.remaining));
  reply.header(RATE_LIMIT_HEADERS.reset, last.text);
  reply.header(RATE_LIMIT_HEADERS.plan, d.plan);
  if (!d.allowed) reply.header(RATE_LIMIT_HEADERS.retryAfter, String(d.retryAfterSeconds));
}

/** The keyless budget of a client address, read without spending it; undefined when the
 *  store cannot be read (the answer then goes without the headers). */
export async function addressFigures(access: Access, ip: string | undefined): Promise<(RateDecision & { plan: Plan }) | undefined> {
  try {
    return { ...(await access.limiter.peek(anonymousSubject(ip), access.anonymousPerMinute)), plan: PER_ADDRESS_PLAN, allowed: true };
  } catch {
    return undefined;
  }
}

/** X-RateLimit-* (and Retry-After on a refusal) for a decision, as header name and value. */
export function rateLimitHeaders(d: RateDecision & { plan: Plan }): [string, string][] {
  const out: [string, string][] = [
    [RATE_LIMIT_HEADERS.limit, String(d.limit)],
    [RATE_LIMIT_HEADERS.remaining, String(d.remaining)],
    [RATE_LIMIT_HEADERS.reset, new Date(d.resetAt).toISOString()],
    [RATE_LIMIT_HEADERS.plan, d.plan],
  ];
  if (!d.allowed) out.push([RATE_LIMIT_HEADERS.retryAfter, String(d.retryAfterSeconds)]);
  return out;
}
