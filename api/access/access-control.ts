// Authentication and rate limiting for every non-exempt request (DESIGN.md section 4), as
// hooks on the root Fastify instance: they run for every route registered after them,
// in any plugin, so interfaces added later are protected without any change here.
//
//   onRequest   key from x-api-key (wins) or ?api-key=; 401 missing, 403 unknown/inactive/
//               revoked (both also count against a per-IP limit); valid: 1 unit counted.
//   preHandler  a JSON-RPC batch (POST /v1/rpc with an array body) counts one unit per
//               call (callCount: a batch refused whole counts once): the units beyond
//               the first are counted once the body is parsed.
//   onSend      X-RateLimit-* on every authenticated response, errors included;
//               Retry-After on 429.
//   onResponse  per-key usage, counted off the request path.
//
// Other adapters that do several units of work per request call
// `await request.consumeRateLimit(n)` (docs/access.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../core/errors.ts';
import { PLAN_LIMITS, type KeyStatus, type Plan } from '../../views/api-key-store.ts';
import { callCount } from '../rpc/json-rpc.ts';
import type { Access } from './access.ts';
import { interfaceOf, isExempt, pathOf, rpcMethods } from './protected-paths.ts';
import type { RateDecision } from './rate-limiter.ts';

export interface AuthenticatedKey {
  id: string;
  name: string;
  plan: Plan;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key on protected routes once authenticated; null elsewhere. */
    apiKey: AuthenticatedKey | null;
    /** The latest rate-limit decision for this request (drives the X-RateLimit-* headers). */
    rateLimit: (RateDecision & { plan: Plan | 'anonymous' }) | null;
    /** Count `units` more requests against the caller's plan; throws the 429 AppError when
     *  the limit is exceeded. No-op on exempt routes. */
    consumeRateLimit(units: number): Promise<void>;
  }
}

export const MISSING_KEY_MESSAGE = 'API key required: send it in the x-api-key header or the api-key query parameter';

const STATUS_MESSAGE: Record<Exclude<KeyStatus, 'active'>, string> = {
  inactive: 'API key is inactive',
  revoked: 'API key has been revoked',
};

function firstString(v: unknown): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.trim() !== '' ? s.trim() : undefined;
}

/** The presented key: the header wins when both forms are sent (SPEC.md prefers it). */
export function presentedKey(req: FastifyRequest): string | undefined {
  const fromHeader = firstString(req.headers['x-api-key']);
  if (fromHeader !== undefined) return fromHeader;
  const query = req.query as Record<string, unknown> | undefined;
  return firstString(query?.['api-key']);
}

const rateLimitedError = (d: RateDecision, who: string): AppError =>
  new AppError(
    Errors.rateLimited,
    `Rate limit exceeded: ${d.limit} requests per minute for ${who}; retry after ${d.retryAfterSeconds} s`,
  );

export function installAccessControl(app: FastifyInstance, access: Access): void {
  app.decorateRequest('apiKey', null);
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('consumeRateLimit', async function consumeRateLimit(this: FastifyRequest, units: number): Promise<void> {
    await charge(this, units);
  });

  async function charge(req: FastifyRequest, units: number): Promise<void> {
    const key = req.apiKey;
    if (key === null || units <= 0) return;
    const limit = PLAN_LIMITS[key.plan];
    const decision = await access.limiter.consume(`key:${key.id}`, limit, units);
    req.rateLimit = { ...decision, plan: key.plan };
    if (!decision.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw rateLimitedError(decision, `plan ${key.plan}`);
    }
  }

  /** Requests without a valid key are counted per client IP; over the limit they get 429
   *  instead of 401/403, so keys cannot be guessed at speed. */
  async function chargeAnonymous(req: FastifyRequest): Promise<void> {
    const decision = await access.limiter.consume(`ip:${req.ip}`, access.anonymousPerMinute, 1);
    if (!decision.allowed) {
      req.rateLimit = { ...decision, plan: 'anonymous' };
      access.metrics.rateLimitRejections.inc({ plan: 'anonymous' });
      throw rateLimitedError(decision, 'requests without a valid API key from one address');
    }
  }

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (isExempt(pathOf(req.url))) return;
    const secret = presentedKey(req);
    if (secret === undefined) {
      access.metrics.authFailures.inc({ reason: 'missing' });
      await chargeAnonymous(req);
      throw new AppError(Errors.unauthorized, MISSING_KEY_MESSAGE);
    }
    const record = await access.authenticator.lookup(secret);
    if (record === undefined) {
      access.metrics.authFailures.inc({ reason: 'invalid' });
      await chargeAnonymous(req);
      throw new AppError(Errors.forbidden, 'Invalid API key');
    }
    if (record.status !== 'active') {
      const status = record.status;
      access.metrics.authFailures.inc({ reason: status });
      await chargeAnonymous(req);
      throw new AppError(Errors.forbidden, STATUS_MESSAGE[status]);
    }
    req.apiKey = { id: record.id, name: record.name, plan: record.plan };
    await charge(req, 1);
  });

  app.addHook('preHandler', async (req: FastifyRequest) => {
    // The matched route, not the raw path: whatever spelling reached the JSON-RPC handler.
    if (req.apiKey === null || req.method !== 'POST' || req.routeOptions.url !== '/v1/rpc') return;
    // callCount: a batch refused as a whole (over 100 calls) runs nothing and counts once.
    const calls = callCount(req.body);
    if (calls > 1) await charge(req, calls - 1);
  });

  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const d = req.rateLimit;
    if (d !== null) {
      reply.header('x-ratelimit-limit', d.limit);
      reply.header('x-ratelimit-remaining', d.remaining);
      reply.header('x-ratelimit-reset', new Date(d.resetAt).toISOString());
      if (d.plan !== 'anonymous') reply.header('x-ratelimit-plan', d.plan);
      if (!d.allowed) reply.header('retry-after', d.retryAfterSeconds);
    }
    return payload;
  });

  app.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
    const key = req.apiKey;
    if (key === null) return;
    const path = pathOf(req.url);
    const iface = interfaceOf(path);
    const outcome = { error: reply.statusCode >= 400, rateLimited: reply.statusCode === 429 };
    if (iface === 'rpc' && req.body !== undefined) {
      for (const method of rpcMethods(req.body).slice(0, callCount(req.body))) access.usage.record(key.id, iface, method, outcome);
    } else {
      const route = req.routeOptions.url ?? '(unmatched)';
      access.usage.record(key.id, iface, `${req.method} ${route}`, outcome);
    }
  });
}
