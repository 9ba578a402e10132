// Authentication and rate limiting for every request to a keyed route (DESIGN.md section 4),
// as hooks on the root Fastify instance: they run for every route registered after them, in
// any plugin. Whether a route needs a key, its door and its interface are the route's own
// declaration (`config.policy`, route-policy.ts); a route that declares nothing, and a path no
// route answers, need a key, so interfaces added later are protected without any change here.
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
// GraphQL counts each top-level field as one unit (api/doors/graphql/graphql-routes.ts); other
// adapters that do several units of work per request call
// `await request.consumeRateLimit(n)` (docs/access.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import type { Plan } from '../../../core/plans.ts';
import type { KeyStatus } from '../../../warehouse/api-key-store.ts';
import type { EdgeStep } from '../answers/answer-edge.ts';
import { admitPayment, payable, pricedCalls } from '../x402/x402-fastify.ts';
import type { Access } from './access.ts';
import { keyChallenge, MISSING_KEY_MESSAGE, MISSING_KEY_MESSAGE_BEARER, presentedKey, takesBearer } from './presented-key.ts';
import { allowedPolicy, type RouteTable } from './allowed-methods.ts';
import { chargeExecutionPoll, isExecutionPoll } from './execution-polls.ts';
import { isUnservedOAuth, pathOf, policyOf, wantsGraphiql } from './route-policy.ts';
import { rpcCallCount } from './rpc-usage.ts';
import { anonymousSubject, setDecisionHeaders, setRateLimitHeaders, type ResetText } from './rate-limit-headers.ts';
import type { RateDecision } from './rate-limiter.ts';
import { grantBudget } from './request-budget.ts';
import { type AuthenticatedKey, RequestLedger } from './request-ledger.ts';
import { RequestMeter } from './request-meter.ts';

export { type AuthenticatedKey, UNFINISHED_CALL } from './request-ledger.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key on protected routes once authenticated; null elsewhere. */
    apiKey: AuthenticatedKey | null;
    /** The latest rate-limit decision for this request (drives the X-RateLimit-* headers). */
    rateLimit: (RateDecision & { plan: Plan }) | null;
    /** Count `units` more requests against the caller's plan; throws the 429 AppError when
     *  the limit is exceeded. No-op on public routes. */
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

const STATUS_MESSAGE: Record<Exclude<KeyStatus, 'active'>, string> = {
  inactive: 'API key is inactive',
  revoked: 'API key has been revoked',
};

/** Access control of one app: the meter that charges requests, the ledger of admitted ones. */
interface Gate {
  access: Access;
  meter: RequestMeter;
  ledger: RequestLedger;
  /** The routes as registered (allowed-methods.ts): a method a public path does not answer is its 405, without a key. */
  routes: RouteTable;
}

/** Install the key check, the rate limits, the in-flight slots and the usage records; returns
 *  the answer edge's step of access control (answer-edge.ts), which the caller installs. */
export function installAccessControl(app: FastifyInstance, access: Access, routes: RouteTable = new Map()): EdgeStep {
  const gate: Gate = { access, meter: new RequestMeter(access), ledger: new RequestLedger(access), routes };
  decorate(app, gate);
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => authenticate(gate, req, reply));
  // A pending x402 call: priced, then 402 or, its payment verified, the payer's call under the x402 plan.
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.x402 !== 'pending' || access.x402 === undefined) return;
    // Each call the body holds is priced: each counts (the first did on arrival).
    const calls = pricedCalls(req);
    if (calls > 1) await gate.meter.chargePaymentAttempt(req, calls - 1);
    const paid = await admitPayment(access.x402, req, reply);
    if (paid === undefined) return reply;
    req.x402 = paid;
    // A POST /mcp none of whose tool calls verified a payment: its protocol messages are
    // answered and its tool calls asked to pay, under the x402 plan's budget, as no one's.
    if (paid.payer === undefined) {
      grantBudget(req, 'x402', access.answerMemory, reply);
      return;
    }
    const key: AuthenticatedKey = { id: `x402:${paid.payer}`, name: paid.payer, plan: 'x402' };
    req.apiKey = key;
    grantBudget(req, 'x402', access.answerMemory, reply);
    await gate.meter.charge(req, 1);
    admitOrWatch(gate, req, reply, key, true);
  });
  app.addHook('preHandler', async (req: FastifyRequest) => {
    // The matched route, not the raw path: whatever spelling reached the JSON-RPC handler.
    if (req.apiKey === null || req.method !== 'POST' || req.routeOptions.url !== '/v1/rpc') return;
    // rpcCallCount: a batch refused as a whole (over 100 calls) runs nothing and counts once.
    const calls = rpcCallCount(req.body);
    if (calls > 1) await gate.meter.charge(req, calls - 1);
  });
  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    gate.ledger.recordUsageOnce(req, reply);
    done();
  });
  // The edge step: the answer is ready, so its slot may go once the response ends; a request
  // with a limit decision (every keyed one) gets its headers at once, only keyless answers
  // wait for their address's figures.
  const lastReset: ResetText = { at: NaN, text: '' };
  return (req, reply, payload) => {
    gate.ledger.answered(req, reply);
    if (req.rateLimit !== null && req.rateLimit !== undefined) {
      setDecisionHeaders(reply, req.rateLimit, lastReset);
      return payload;
    }
    return setRateLimitHeaders(access, req, reply).then(() => payload);
  };
}

/** The request's fields access control fills, and the charges a door may ask for more. */
function decorate(app: FastifyInstance, { meter, ledger }: Gate): void {
  app.decorateRequest('apiKey', null);
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('rpcOutcomes', null);
  app.decorateRequest('usageCalls', null);
  app.decorateRequest('usageExpected', 0);
  app.decorateRequest('x402', null);
  app.decorateRequest('consumeRateLimit', async function consumeRateLimit(this: FastifyRequest, units: number): Promise<void> {
    await meter.charge(this, units);
  });
  app.decorateRequest('consumeRateLimitOf', async function consumeRateLimitOf(this: FastifyRequest, key: { id: string; plan: Plan } | null): Promise<void> {
    if (key === null) await meter.chargeAnonymous(this);
    else {
      // Charged to a key it did not present (a signed link's issuer): recorded under it too.
      if (this.apiKey === null) ledger.chargedTo(this, key);
      await meter.charge(this, 1, key);
    }
  });
}

/** JSON-RPC, REST, MCP and GraphQL's request route take an in-flight slot; the rest (SQL,
 *  exports, downloads, live streams: long-lived) are only watched for a cut-off answer. */
function admitOrWatch({ ledger }: Gate, req: FastifyRequest, reply: FastifyReply, key: AuthenticatedKey, bodyRead = false): void {
  const policy = policyOf(req);
  const iface = policy.interface;
  if (iface === 'rpc' || iface === 'rest' || iface === 'mcp' || policy.door === 'graphql') ledger.admit(req, reply, key, bodyRead);
  else ledger.watchWithoutSlot(req, reply);
}

/** Whether a request needs no key: its route declares itself public; or no route matched and
 *  it is a discovery or OAuth path no route serves (its 404), or a method a public path does
 *  not answer (its 405); or it asks for the GraphiQL page. */
function isPublic({ routes }: Gate, req: FastifyRequest): boolean {
  if (policyOf(req).access === 'public') return true;
  const path = pathOf(req.url);
  if (req.routeOptions.url === undefined && (isUnservedOAuth(path, undefined) || allowedPolicy(routes.values(), path)?.access === 'public')) return true;
  return wantsGraphiql(req.method, path, req.headers.accept);
}

/** The key check of a protected request: 401 missing, 403 unknown or not active, else the
 *  key's budget granted, one unit charged and (by door) an in-flight slot taken. */
async function authenticate(gate: Gate, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { access, meter } = gate;
  if (isPublic(gate, req)) return;
  const secret = presentedKey(req);
  // x402 on: a keyless call to a keyed door may pay for itself; priced once its body is read (preHandler).
  if (secret === undefined && access.x402 !== undefined && payable(policyOf(req))) {
    await meter.chargePaymentAttempt(req);
    req.x402 = 'pending';
    return;
  }
  if (secret === undefined) {
    access.metrics.authFailures.inc({ reason: 'missing' });
    await meter.chargeAnonymous(req);
    const bearer = takesBearer(req);
    reply.header('www-authenticate', keyChallenge(bearer));
    throw new AppError(Errors.unauthorized, bearer ? MISSING_KEY_MESSAGE_BEARER : MISSING_KEY_MESSAGE);
  }
  // A secret the key snapshot does not know costs a store query; once the address has
  // spent its budget for requests without a valid key, it is refused before that query
  // (and the refusal counts, like every refused request), so guessing cannot load the engine.
  const record = await access.authenticator.lookup(secret, async () => {
    const budget = await access.limiter.peek(anonymousSubject(req.ip), access.anonymousPerMinute);
    if (!budget.allowed) await meter.chargeAnonymous(req);
  });
  const refusal =
    record === undefined
      ? { reason: 'invalid', message: 'Invalid API key' }
      : record.accountDisabled
        ? { reason: 'inactive', message: 'API key belongs to a disabled account' }
        : record.status !== 'active'
          ? { reason: record.status, message: STATUS_MESSAGE[record.status] }
          : undefined;
  if (record === undefined || refusal !== undefined) {
    access.metrics.authFailures.inc({ reason: refusal!.reason });
    await meter.chargeAnonymous(req);
    throw new AppError(Errors.forbidden, refusal!.message);
  }
  req.apiKey = { id: record.id, name: record.name, plan: record.plan };
  // From here every statement this request causes runs under the plan's budget at this door.
  grantBudget(req, record.plan, access.answerMemory, reply);
  // The matched route, not the raw path: a spelling such as /v1/%72pc reaches the same handler.
  // A poll of an execution's state spends a poll window of its own, not the plan's.
  if (isExecutionPoll(req.method, req.routeOptions.url ?? '')) await chargeExecutionPoll(access, req, record);
  else await meter.charge(req, 1);
  admitOrWatch(gate, req, reply, req.apiKey);
}
