// Authentication and rate limiting for every non-exempt request (DESIGN.md section 4), as
// hooks on the root Fastify instance: they run for every route registered after them,
// in any plugin, so interfaces added later are protected without any change here.
//
//   onRequest   key from x-api-key (wins) or ?api-key=; 401 missing, 403 unknown/inactive/
//               revoked (both also count against a per-IP limit; once that is spent, a key
//               the snapshot does not know is refused 429 before any store lookup); valid:
//               1 unit counted (a poll of an SQL execution's state: 1 of its poll window
//               instead, execution-polls.ts), and on JSON-RPC, REST and POST/GET /graphql one of the
//               key's in-flight slots taken (PLAN_CONCURRENCY; 429 when none is free).
//               GET /graphql accepting text/html (the GraphiQL page) needs no key.
//               Operator paths (/admin/*, /metrics) check their bearer token in their own
//               hooks (operator-auth.ts), with a per-address budget of failures.
//   preHandler  a JSON-RPC batch (POST /v1/rpc with an array body) counts one unit per
//               call (rpcCallCount: a batch refused whole counts once): the units beyond
//               the first are counted once the body is parsed.
//   onSend      X-RateLimit-* on every response, errors included: the key's figures, or
//               for a request without a valid key its address's figures (the per-IP limit
//               of keyless requests, or the operator-token budget); Retry-After on 429.
//   onResponse  per-key usage, counted off the request path; JSON-RPC calls by method, as
//               the adapter reports their answers (req.rpcOutcomes); MCP calls by tool or
//               method (req.usageCalls).
//
// GraphQL counts each top-level field as one unit (api/graphql/graphql-routes.ts); other
// adapters that do several units of work per request call
// `await request.consumeRateLimit(n)` (docs/access.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Budget } from '../../core/budget.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { PLAN_CONCURRENCY, PLAN_LIMITS, type Plan } from '../../core/plans.ts';
import type { KeyStatus } from '../../warehouse/api-key-store.ts';
import type { EdgeStep } from '../answers/answer-edge.ts';
import type { Access } from './access.ts';
import { chargeExecutionPoll } from './execution-polls.ts';
import { PER_ADDRESS_PLAN } from './operator-auth.ts';
import { anonymousSubject, setDecisionHeaders, setRateLimitHeaders, type ResetText } from './rate-limit-headers.ts';
import { interfaceOf, isExecutionPoll, isExempt, pathOf, rpcCallCount, rpcUsageMethod, rpcUsageMethods, wantsGraphiql } from './protected-paths.ts';
import { keyChallenge, MISSING_KEY_MESSAGE, MISSING_KEY_MESSAGE_BEARER, presentedKey, takesBearer } from './presented-key.ts';
import type { RateDecision } from './rate-limiter.ts';
import { grantBudget } from './request-budget.ts';
import { answerStatsOf } from './answer-stats.ts';
import type { UsageSpent } from './usage-recorder.ts';
import { ABANDONED_SLOT_RELEASE_MS } from '../../core/limits/access.ts';
import { admitPayment, payable } from '../x402/x402-fastify.ts';

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
    rateLimit: (RateDecision & { plan: Plan }) | null;
    /** Count `units` more requests against the caller's plan; throws the 429 AppError when
     *  the limit is exceeded. No-op on exempt routes. */
    consumeRateLimit(units: number): Promise<void>;
    /** Count one request of a route that carries its own credential (a signed export link)
     *  against the plan of the key it stands for, or, when the credential is not valid
     *  (null), against the client's address like any request without a valid key. */
    consumeRateLimitOf(key: { id: string; plan: Plan } | null): Promise<void>;
    /** Set by the JSON-RPC adapter: each answer's method as sent and whether it is an error,
     *  in request order (notifications get no answer and are absent). null elsewhere. */
    rpcOutcomes: { method: string | undefined; error: boolean }[] | null;
    /** Set by a door that answers several calls per request (the MCP door): each call's usage
     *  label, from the door's own bounded vocabulary, and whether it failed. null elsewhere. */
    usageCalls: { label: string; error: boolean }[] | null;
    /** How many calls the request holds (the door that set usageCalls counts them as it starts):
     *  those not reported by the time its usage is recorded (its answer cut off, timed out, or
     *  its client gone) still ran or were refused, and are recorded as UNFINISHED_CALL. */
    usageExpected: number;
  }
}

/** The usage label of a call of a batch still running (or never reported) when the request's answer went. */
export const UNFINISHED_CALL = '(unfinished call)';

const STATUS_MESSAGE: Record<Exclude<KeyStatus, 'active'>, string> = {
  inactive: 'API key is inactive',
  revoked: 'API key has been revoked',
};




const rateLimitedError = (d: RateDecision, who: string): AppError =>
  new AppError(
    Errors.rateLimited,
    `Rate limit exceeded: ${d.limit} requests per minute for ${who}; retry after ${d.retryAfterSeconds} s`,
  );

/**
 * One admitted request's in-flight slot. Held until the answer is ready (onSend: the handler
 * and its engine work are done) AND the response has ended (sent, or the client gone): a
 * client that disconnects cannot free its slot while its query still runs, and one that stops
 * reading keeps it; and until none of its work still runs (Budget.work: a batch member whose
 * POST was answered without it, a cancelled MCP call), so answering early frees no slot while
 * the work goes on. An object, not closures made per request: every request takes one.
 */
class Slot {
  private answeredYet = false;
  private ended = false;
  private abandoned: NodeJS.Timeout | undefined;

  /** `budget`: the request's; the slot waits for its work (a cancelled MCP call still running) to end. */
  constructor(private readonly release: () => void, private readonly budget: Budget | null) {}

  answered(): void {
    this.answeredYet = true;
    this.settle();
  }

  closed(): void {
    this.ended = true;
    this.settle();
    if (!this.answeredYet) this.abandoned = setTimeout(this.release, ABANDONED_SLOT_RELEASE_MS).unref();
  }

  /** The whole answer is sent: the slot goes once none of the request's work runs any more. */
  done(): void {
    if (this.budget === null) this.release();
    else this.budget.whenIdle(this.release);
  }

  private settle(): void {
    if (!this.answeredYet || !this.ended) return;
    clearTimeout(this.abandoned);
    this.done();
  }
}

/** Install the key check, the rate limits, the in-flight slots and the usage records; returns
 *  the answer edge's step of access control (answer-edge.ts), which the caller installs. */
export function installAccessControl(app: FastifyInstance, access: Access): EdgeStep {
  app.decorateRequest('apiKey', null);
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('rpcOutcomes', null);
  app.decorateRequest('usageCalls', null);
  app.decorateRequest('usageExpected', 0);
  app.decorateRequest('x402', null);
  app.decorateRequest('consumeRateLimit', async function consumeRateLimit(this: FastifyRequest, units: number): Promise<void> {
    await charge(this, units);
  });

  app.decorateRequest('consumeRateLimitOf', async function consumeRateLimitOf(this: FastifyRequest, key: { id: string; plan: Plan } | null): Promise<void> {
    if (key === null) await chargeAnonymous(this);
    else {
      // Charged to a key it did not present (a signed link's issuer): recorded under it too.
      if (this.apiKey === null) chargedKeys.set(this, key);
      await charge(this, 1, key);
    }
  });

  /** Requests charged to a key they did not authenticate with (signed links), for usage. */
  const chargedKeys = new WeakMap<FastifyRequest, { id: string; plan: Plan }>();

  async function charge(req: FastifyRequest, units: number, key: { id: string; plan: Plan } | null = req.apiKey): Promise<void> {
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
   *  instead of 401/403, so keys cannot be guessed at speed. Their 401/403 carry the
   *  address's figures. */
  async function chargeAnonymous(req: FastifyRequest): Promise<void> {
    const decision = await access.limiter.consume(anonymousSubject(req.ip), access.anonymousPerMinute, 1);
    req.rateLimit = { ...decision, plan: PER_ADDRESS_PLAN };
    if (!decision.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'anonymous' });
      throw rateLimitedError(decision, 'requests without a valid API key from one address');
    }
  }

  /** A keyless payable call (x402): counted against its address's budget of 402 answers and payment attempts. */
  async function chargePaymentAttempt(req: FastifyRequest): Promise<void> {
    const perMinute = access.x402?.config.requirementsPerMinute ?? access.anonymousPerMinute;
    const decision = await access.limiter.consume(`x402:${anonymousSubject(req.ip)}`, perMinute, 1);
    req.rateLimit = { ...decision, plan: PER_ADDRESS_PLAN };
    if (!decision.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'anonymous' });
      throw rateLimitedError(decision, 'payment requirements and payment attempts from one address');
    }
  }

  /** In-flight slots of admitted requests, by request: released once. */
  const slots = new WeakMap<FastifyRequest, Slot>();
  /** Requests whose answer the edge has passed, and those whose usage is recorded (recordUsageOnce). */
  const answeredRequests = new WeakSet<FastifyRequest>();
  const recordedRequests = new WeakSet<FastifyRequest>();

  /** Take one of the key's in-flight slots for this request, or refuse it with 429. */
  function admit(req: FastifyRequest, reply: FastifyReply, key: AuthenticatedKey): void {
    // The client left while the key was checked: no answer can reach it, so no work starts
    // (a request sent and dropped at once must not run without a slot), and no slot is
    // taken that its already-past 'close' could never give back.
    if (req.raw.destroyed || reply.raw.destroyed) throw new AppError(Errors.invalidRequest, 'the connection closed before the request was admitted');
    const cap = PLAN_CONCURRENCY[key.plan];
    const release = access.inFlight.tryAcquire(key.id, cap);
    if (release === undefined) {
      access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw new AppError(
        Errors.rateLimited,
        `Too many requests in flight: plan ${key.plan} allows ${cap} concurrent JSON-RPC, REST and GraphQL requests per API key; retry when one of them has been answered`,
        { retryAfterSeconds: 1 },
      );
    }
    const slot = new Slot(release, req.budget);
    slots.set(req, slot);
    reply.raw.once('close', () => {
      slot.closed();
      recordIfCutOff(req, reply);
    });
  }

  /**
   * Closed while its answer was being sent (passed by the edge, or a hijacked stream, which
   * never reaches it): it will never finish, so onResponse never runs (see recordUsageOnce).
   */
  function recordIfCutOff(req: FastifyRequest, reply: FastifyReply): void {
    if (!reply.raw.writableFinished && (answeredRequests.has(req) || reply.sent)) recordUsageOnce(req, reply);
  }

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(req.url);
    if (isExempt(path, req.routeOptions.url) || wantsGraphiql(req.method, path, req.headers.accept)) return;
    const secret = presentedKey(req);
    // x402 on: a keyless call to a keyed door may pay for itself; priced once its body is read (preHandler).
    if (secret === undefined && access.x402 !== undefined && payable(req.routeOptions.url ?? '')) {
      await chargePaymentAttempt(req);
      req.x402 = 'pending';
      return;
    }
    if (secret === undefined) {
      access.metrics.authFailures.inc({ reason: 'missing' });
      await chargeAnonymous(req);
      const bearer = takesBearer(req);
      reply.header('www-authenticate', keyChallenge(bearer));
      throw new AppError(Errors.unauthorized, bearer ? MISSING_KEY_MESSAGE_BEARER : MISSING_KEY_MESSAGE);
    }
    // A secret the key snapshot does not know costs a store query; once the address has
    // spent its budget for requests without a valid key, it is refused before that query
    // (and the refusal counts, like every refused request), so guessing cannot load the engine.
    const record = await access.authenticator.lookup(secret, async () => {
      const budget = await access.limiter.peek(anonymousSubject(req.ip), access.anonymousPerMinute);
      if (!budget.allowed) await chargeAnonymous(req);
    });
    if (record === undefined) {
      access.metrics.authFailures.inc({ reason: 'invalid' });
      await chargeAnonymous(req);
      throw new AppError(Errors.forbidden, 'Invalid API key');
    }
    if (record.accountDisabled) {
      access.metrics.authFailures.inc({ reason: 'inactive' });
      await chargeAnonymous(req);
      throw new AppError(Errors.forbidden, 'API key belongs to a disabled account');
    }
    if (record.status !== 'active') {
      const status = record.status;
      access.metrics.authFailures.inc({ reason: status });
      await chargeAnonymous(req);
      throw new AppError(Errors.forbidden, STATUS_MESSAGE[status]);
    }
    req.apiKey = { id: record.id, name: record.name, plan: record.plan };
    // From here every statement this request causes runs under the plan's budget at this door.
    grantBudget(req, record.plan, access.answerMemory, reply);
    // The matched route, not the raw path: a spelling such as /v1/%72pc reaches the same handler.
    const route = req.routeOptions.url ?? '';
    // A poll of an execution's state spends a poll window of its own, not the plan's.
    if (isExecutionPoll(req.method, route)) await chargeExecutionPoll(access, req, record);
    else await charge(req, 1);
    const routeIface = interfaceOf(route);
    // GraphQL's request route only: its event streams (/graphql/stream) are long-lived.
    if (routeIface === 'rpc' || routeIface === 'rest' || routeIface === 'mcp' || route === '/graphql') admit(req, reply, req.apiKey);
    // No slot (SQL, exports, downloads, live streams): their answers are cut off mid-send too.
    else reply.raw.once('close', () => recordIfCutOff(req, reply));
  });

  // A pending x402 call: priced, then 402 or, its payment verified, the payer's call under the x402 plan.
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.x402 !== 'pending' || access.x402 === undefined) return;
    const paid = await admitPayment(access.x402, req, reply);
    if (paid === undefined) return reply;
    req.x402 = paid;
    const key: AuthenticatedKey = { id: `x402:${paid.payer}`, name: paid.payer, plan: 'x402' };
    req.apiKey = key;
    grantBudget(req, 'x402', access.answerMemory, reply);
    await charge(req, 1);
    const route = req.routeOptions.url ?? '';
    if (['rpc', 'rest', 'mcp'].includes(interfaceOf(route)) || route === '/graphql') admit(req, reply, key);
    else reply.raw.once('close', () => recordIfCutOff(req, reply));
  });

  app.addHook('preHandler', async (req: FastifyRequest) => {
    // The matched route, not the raw path: whatever spelling reached the JSON-RPC handler.
    if (req.apiKey === null || req.method !== 'POST' || req.routeOptions.url !== '/v1/rpc') return;
    // rpcCallCount: a batch refused as a whole (over 100 calls) runs nothing and counts once.
    const calls = rpcCallCount(req.body);
    if (calls > 1) await charge(req, calls - 1);
  });

  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    recordUsageOnce(req, reply);
    done();
  });

  // The edge step: the answer is ready, so its slot may go once the response ends; a request
  // with a limit decision (every keyed one) gets its headers at once, only keyless answers
  // wait for their address's figures.
  const lastReset: ResetText = { at: NaN, text: '' };
  const answerStep: EdgeStep = (req, reply, payload) => {
    slots.get(req)?.answered();
    // Its client left before the answer was ready: the response will never finish, so
    // onResponse never runs; the call ran and counted, so it is recorded now.
    if (reply.raw.destroyed) recordUsageOnce(req, reply);
    else answeredRequests.add(req);
    if (req.rateLimit !== null && req.rateLimit !== undefined) {
      setDecisionHeaders(reply, req.rateLimit, lastReset);
      return payload;
    }
    return setRateLimitHeaders(access, req, reply).then(() => payload);
  };
  return answerStep;

  /**
   * Usage is recorded once per request: when its response finishes (onResponse), or, for a
   * client that left, once the answer is ready (answerStep) or when the connection closed
   * while the answer was being sent (admit's close listener). Fastify runs onResponse only
   * for a response that finished, so a call whose client left ran and counted unrecorded.
   */
  function recordUsageOnce(req: FastifyRequest, reply: FastifyReply): void {
    if (recordedRequests.has(req)) return;
    recordedRequests.add(req);
    recordUsage(req, reply);
  }

  function recordUsage(req: FastifyRequest, reply: FastifyReply): void {
    // The whole answer is sent: the slot goes once nothing of this request runs any more.
    slots.get(req)?.done();
    const key = req.apiKey ?? chargedKeys.get(req);
    if (key === null || key === undefined) return;
    const iface = interfaceOf(req.routeOptions.url ?? pathOf(req.url));
    const outcome = { error: reply.statusCode >= 400, rateLimited: reply.statusCode === 429 };
    // The answer's cost and reads (its X-Stats-* figures) on the usage row of what it did.
    const stats = answerStatsOf(req.budget);
    const spent = { cost: stats?.cost ?? 0, rowsRead: stats?.rowsRead ?? 0, bytesRead: stats?.bytesRead ?? 0 };
    if (req.rpcOutcomes !== null) {
      // As answered: names outside the method table under one label, errors as errors,
      // notifications (no answer, nothing run) not at all. A batch's calls run side by side
      // on one budget: its cost is shared evenly among them.
      const share = sharedSpent(spent, req.rpcOutcomes.length);
      for (const o of req.rpcOutcomes) access.usage.record(key.id, 'rpc', rpcUsageMethod(o.method), { error: o.error, rateLimited: false }, 1, share);
    } else if (req.usageCalls !== null && (req.usageCalls.length > 0 || req.usageExpected > 0)) {
      // MCP tool calls of one request, as a JSON-RPC batch's: the cost shared evenly. Every call
      // that ran is a row, whatever became of the whole answer (cut off, timed out, its client gone).
      const calls = [...req.usageCalls];
      for (let missing = req.usageExpected - calls.length; missing > 0; missing--) calls.push({ label: UNFINISHED_CALL, error: true });
      const share = sharedSpent(spent, calls.length);
      for (const c of calls) access.usage.record(key.id, iface, c.label, { error: c.error || outcome.error, rateLimited: false }, 1, share);
    } else if (iface === 'rpc' && req.body !== undefined) {
      // Refused before the adapter ran (a batch over the rate limit): each call it held.
      for (const method of rpcUsageMethods(req.body)) access.usage.record(key.id, iface, method, outcome);
    } else {
      const route = req.routeOptions.url ?? '(unmatched)';
      access.usage.record(key.id, iface, `${req.method} ${route}`, outcome, 1, spent);
    }
  }
}

const sharedSpent = (s: UsageSpent, calls: number): UsageSpent =>
  calls <= 1 ? s : { cost: s.cost / calls, rowsRead: s.rowsRead / calls, bytesRead: s.bytesRead / calls };
