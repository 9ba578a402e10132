// What access control keeps per request once it is admitted: its in-flight slot, released when
// the answer is ready and the response has ended, and its usage, recorded exactly once however
// the request ends (answered, cut off mid-send, or its client gone before the answer).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { ABANDONED_SLOT_RELEASE_MS } from '../../../core/limits/access.ts';
import { PLAN_CONCURRENCY, type Plan } from '../../../core/plans.ts';
import type { Access } from './access.ts';
import { answerStatsOf } from './answer-stats.ts';
import { policyOf } from './route-policy.ts';
import { rpcUsageMethod, rpcUsageMethods } from './rpc-usage.ts';
import type { UsageSpent } from './usage-recorder.ts';

/** The usage label of a call of a batch still running (or never reported) when the request's answer went. */
export const UNFINISHED_CALL = '(unfinished call)';

export interface AuthenticatedKey {
  id: string;
  name: string;
  plan: Plan;
}

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
  constructor(
    private readonly release: () => void,
    private readonly budget: Budget | null,
  ) {}

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

export class RequestLedger {
  /** In-flight slots of admitted requests, by request: released once. */
  private readonly slots = new WeakMap<FastifyRequest, Slot>();
  /** Requests whose answer the edge has passed, and those whose usage is recorded (recordUsageOnce). */
  private readonly answeredRequests = new WeakSet<FastifyRequest>();
  private readonly recorded = new WeakSet<FastifyRequest>();
  /** Requests charged to a key they did not authenticate with (signed links), for usage. */
  private readonly chargedKeys = new WeakMap<FastifyRequest, { id: string; plan: Plan }>();

  constructor(private readonly access: Access) {}

  /** Usage of `req` goes to `key`, which it did not present (a signed link's issuer). */
  chargedTo(req: FastifyRequest, key: { id: string; plan: Plan }): void {
    this.chargedKeys.set(req, key);
  }

  /** Take one of the key's in-flight slots for this request, or refuse it with 429. */
  admit(req: FastifyRequest, reply: FastifyReply, key: AuthenticatedKey, bodyRead = false): void {
    // The client left while the key was checked: no answer can reach it, so no work starts
    // (a request sent and dropped at once must not run without a slot), and no slot is
    // taken that its already-past 'close' could never give back. Once its body was read (a
    // paid call, admitted then) the request stream has ended by itself: its socket tells.
    const gone = bodyRead ? req.raw.socket?.destroyed === true : req.raw.destroyed;
    if (gone || reply.raw.destroyed) throw new AppError(Errors.invalidRequest, 'the connection closed before the request was admitted');
    const cap = PLAN_CONCURRENCY[key.plan];
    const release = this.access.inFlight.tryAcquire(key.id, cap);
    if (release === undefined) {
      this.access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw new AppError(
        Errors.rateLimited,
        `Too many requests in flight: plan ${key.plan} allows ${cap} concurrent JSON-RPC, REST and GraphQL requests per API key; retry when one of them has been answered`,
        { retryAfterSeconds: 1 },
      );
    }
    const slot = new Slot(release, req.budget);
    this.slots.set(req, slot);
    reply.raw.once('close', () => {
      slot.closed();
      this.recordIfCutOff(req, reply);
    });
  }

  /** A request that takes no slot (SQL, exports, downloads, live streams): its answer can be cut off mid-send too. */
  watchWithoutSlot(req: FastifyRequest, reply: FastifyReply): void {
    reply.raw.once('close', () => this.recordIfCutOff(req, reply));
  }

  /** The answer is ready (the edge passed it): its slot may go once the response ends. */
  answered(req: FastifyRequest, reply: FastifyReply): void {
    this.slots.get(req)?.answered();
    // Its client left before the answer was ready: the response will never finish, so
    // onResponse never runs; the call ran and counted, so it is recorded now.
    if (reply.raw.destroyed) this.recordUsageOnce(req, reply);
    else this.answeredRequests.add(req);
  }

  /**
   * Closed while its answer was being sent (passed by the edge, or a hijacked stream, which
   * never reaches it): it will never finish, so onResponse never runs (see recordUsageOnce).
   */
  private recordIfCutOff(req: FastifyRequest, reply: FastifyReply): void {
    if (!reply.raw.writableFinished && (this.answeredRequests.has(req) || reply.sent)) this.recordUsageOnce(req, reply);
  }

  /**
   * Usage is recorded once per request: when its response finishes (onResponse), or, for a
   * client that left, once the answer is ready (answerStep) or when the connection closed
   * while the answer was being sent (admit's close listener). Fastify runs onResponse only
   * for a response that finished, so a call whose client left ran and counted unrecorded.
   */
  recordUsageOnce(req: FastifyRequest, reply: FastifyReply): void {
    if (this.recorded.has(req)) return;
    this.recorded.add(req);
    this.recordUsage(req, reply);
  }

  private recordUsage(req: FastifyRequest, reply: FastifyReply): void {
    const access = this.access;
    // The whole answer is sent: the slot goes once nothing of this request runs any more.
    this.slots.get(req)?.done();
    const key = req.apiKey ?? this.chargedKeys.get(req);
    if (key === null || key === undefined) return;
    const iface = policyOf(req).interface;
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
