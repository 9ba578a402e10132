// Bearer-token check for the operator surfaces (/admin/* with ADMIN_TOKEN, /metrics with
// METRICS_TOKEN or ADMIN_TOKEN). Wrong tokens are counted per client address in one shared
// budget (DESIGN.md section 4: "failed operator-token attempts are limited per client IP"),
// in the same rate-limit store as API keys, so the budget is one across replicas with Redis.
// Once an address has used its budget, every operator request from it is 429 until the
// window ends, a correct token included: otherwise a 429 for a wrong guess and a 200 for
// the right one would let guessing go on.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import type { Access } from './access.ts';
import { grantOperatorBudget } from './request-budget.ts';
import type { RateDecision } from './rate-limiter.ts';
import { OPERATOR_TOKEN_FAILURES_PER_MINUTE } from '../../../core/limits/access.ts';

export { OPERATOR_TOKEN_FAILURES_PER_MINUTE };

/** The plan named in X-RateLimit-Plan for limits that belong to no key (per-address
 *  limits): SPEC.md allows only free, x402 and enterprise, and an unauthenticated caller
 *  is treated as the lowest plan. X-RateLimit-Limit still gives the per-address figure. */
export const PER_ADDRESS_PLAN = 'free' as const;

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export interface OperatorTokenMessages {
  /** 401 text when no Authorization header is sent. */
  missing: string;
  /** 403 text for a wrong token. */
  invalid: string;
}

const subject = (req: FastifyRequest): string => `operator-token:${req.ip}`;

const tooManyFailures = (d: RateDecision): AppError =>
  new AppError(Errors.rateLimited, `Too many failed operator-token attempts from this address: ${d.limit} per minute; retry after ${d.retryAfterSeconds} s`);

/** An onRequest hook accepting `Authorization: Bearer <t>` for any of `tokens`. */
export function operatorTokenGuard(access: Access, tokens: readonly string[], messages: OperatorTokenMessages) {
  const accepted = tokens.map(digest);
  const limit = OPERATOR_TOKEN_FAILURES_PER_MINUTE;
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    // Checked before the token, so an exhausted budget answers the same whatever is sent.
    const before = await access.limiter.peek(subject(req), limit);
    req.rateLimit = { ...before, plan: PER_ADDRESS_PLAN };
    if (!before.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'operator' });
      throw tooManyFailures(before);
    }
    const header = req.headers.authorization;
    // No token is not a guess: answered 401 without spending the budget.
    if (!header) throw new AppError(Errors.unauthorized, messages.missing);
    const m = /^Bearer\s+(.+)$/i.exec(header);
    const given = m ? digest(m[1]!.trim()) : undefined;
    // Every token is compared (no early exit), each in constant time.
    const ok = given !== undefined && accepted.map((t) => timingSafeEqual(t, given)).includes(true);
    if (ok) {
      grantOperatorBudget(req);
      return;
    }
    access.metrics.authFailures.inc({ reason: 'operator_token' });
    const after = await access.limiter.consume(subject(req), limit, 1);
    req.rateLimit = { ...after, plan: PER_ADDRESS_PLAN };
    // Concurrent guesses can overshoot the peek above; the counter is the authority.
    if (!after.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'operator' });
      throw tooManyFailures(after);
    }
    throw new AppError(Errors.forbidden, messages.invalid);
  };
}
