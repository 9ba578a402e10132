// The charges of access control: each request counted against its key's plan, or against its
// client address when it has no valid key (or pays per call with x402), refused 429 when over.
import type { FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import { PLAN_LIMITS, type Plan } from '../../../core/plans.ts';
import type { Access } from './access.ts';
import { PER_ADDRESS_PLAN } from './operator-auth.ts';
import { anonymousSubject } from './rate-limit-headers.ts';
import type { RateDecision } from './rate-limiter.ts';

const rateLimitedError = (d: RateDecision, who: string): AppError =>
  new AppError(Errors.rateLimited, `Rate limit exceeded: ${d.limit} requests per minute for ${who}; retry after ${d.retryAfterSeconds} s`);

export class RequestMeter {
  constructor(private readonly access: Access) {}

  /** `units` more requests against the key's plan (the request's own key unless given). */
  async charge(req: FastifyRequest, units: number, key: { id: string; plan: Plan } | null = req.apiKey): Promise<void> {
    if (key === null || units <= 0) return;
    const decision = await this.access.limiter.consume(`key:${key.id}`, PLAN_LIMITS[key.plan], units);
    req.rateLimit = { ...decision, plan: key.plan };
    if (!decision.allowed) {
      this.access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw rateLimitedError(decision, `plan ${key.plan}`);
    }
  }

  /** Requests without a valid key are counted per client IP; over the limit they get 429
   *  instead of 401/403, so keys cannot be guessed at speed. Their 401/403 carry the
   *  address's figures. */
  async chargeAnonymous(req: FastifyRequest): Promise<void> {
    await this.chargeAddress(req, anonymousSubject(req.ip), this.access.anonymousPerMinute, 'requests without a valid API key from one address');
  }

  /** A keyless payable call (x402): counted against its address's budget of 402 answers and payment attempts. */
  async chargePaymentAttempt(req: FastifyRequest, units = 1): Promise<void> {
    const perMinute = this.access.x402?.config.requirementsPerMinute ?? this.access.anonymousPerMinute;
    await this.chargeAddress(req, `x402:${anonymousSubject(req.ip)}`, perMinute, 'payment requirements and payment attempts from one address', units);
  }

  private async chargeAddress(req: FastifyRequest, subject: string, perMinute: number, who: string, units = 1): Promise<void> {
    const decision = await this.access.limiter.consume(subject, perMinute, units);
    req.rateLimit = { ...decision, plan: PER_ADDRESS_PLAN };
    if (!decision.allowed) {
      this.access.metrics.rateLimitRejections.inc({ plan: 'anonymous' });
      throw rateLimitedError(decision, who);
    }
  }
}
