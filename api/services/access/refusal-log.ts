// Log lines of refused requests, sampled (docs/access.md, "Logs"). Fastify logs two lines per
// request ("incoming request", "request completed"); a flood of requests refused with 429 (one
// key's 66,054 refused polls in 20 s) made two lines each, which only fills the disk. So:
//  - the first refusal of an API key (or, without a valid key, of an address) is logged, then
//    its refusals for REFUSAL_LOG_WINDOW_SECONDS are counted, and the count logged as one line
//    when the window ends (another window follows while the refusals go on);
//  - while an address is being refused, its "incoming request" lines are held back too (a
//    request answered otherwise still logs its completion line, naming it);
//  - every other line is Fastify's own.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { Errors } from '../../../core/errors.ts';
import { REFUSAL_LOG_MAX_SUBJECTS, REFUSAL_LOG_WINDOW_SECONDS } from '../../../core/limits/access.ts';
import type { Logger } from '../../../core/logger.ts';

const WINDOW_MS = REFUSAL_LOG_WINDOW_SECONDS * 1000;

/** One subject's window: refusals counted since its last line. */
interface RefusalWindow {
  until: number;
  refused: number;
}

export class SampledRefusalLog extends LogController {
  private readonly windows = new Map<string, RefusalWindow>();
  /** Addresses refused lately, until when: their "incoming request" lines are held back. */
  private readonly addresses = new Map<string, number>();
  /** Refusals of subjects past REFUSAL_LOG_MAX_SUBJECTS, counted together. */
  private overflow = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  /** Requests whose "incoming request" line was held back: their completion line names them. */
  private readonly heldBack = new WeakSet<FastifyRequest>();

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    const until = this.addresses.get(request.ip);
    if (until !== undefined && this.now() < until) {
      this.heldBack.add(request);
      return;
    }
    super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (this.isLogDisabled(request)) return;
    if (reply.statusCode === Errors.rateLimited.http) this.refused(request, reply);
    else if (error === null || error === undefined) {
      if (this.heldBack.has(request)) reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
      else super.requestCompleted(error, request, reply, metadata);
    } else super.requestCompleted(error, request, reply, metadata);
  }

  /** Log the counts of windows that have ended (`final`: of every window, at shutdown); runs on
   *  a timer while any window is open. */
  flush(final = false): void {
    const now = this.now();
    for (const [subject, w] of this.windows) {
      if (now < w.until && !final) continue;
      if (w.refused === 0) {
        this.windows.delete(subject);
        continue;
      }
      this.log.info(
        { subject, refused: w.refused, windowSeconds: REFUSAL_LOG_WINDOW_SECONDS },
        `${w.refused} more requests refused (429) in ${REFUSAL_LOG_WINDOW_SECONDS} s`,
      );
      // Still refused: the next window counts on without a line of its own at its start.
      w.until = now + WINDOW_MS;
      w.refused = 0;
    }
    for (const [ip, until] of this.addresses) if (until <= now) this.addresses.delete(ip);
    if (this.overflow > 0) {
      this.log.info(
        { refused: this.overflow, windowSeconds: REFUSAL_LOG_WINDOW_SECONDS },
        `${this.overflow} requests of further keys and addresses refused (429)`,
      );
      this.overflow = 0;
    }
    if (this.windows.size === 0 && this.addresses.size === 0) this.stop();
  }

  /** Stop the timer (the windows' counts are logged by the next flush, if any). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private refused(request: FastifyRequest, reply: FastifyReply): void {
    const now = this.now();
    const key = request.apiKey;
    const subject = key === null || key === undefined ? `ip:${request.ip}` : `key:${key.id}`;
    if (this.addresses.size < REFUSAL_LOG_MAX_SUBJECTS || this.addresses.has(request.ip)) this.addresses.set(request.ip, now + WINDOW_MS);
    this.timer ??= setInterval(() => this.flush(), WINDOW_MS).unref();
    const w = this.windows.get(subject);
    if (w !== undefined) {
      w.refused += 1;
      return;
    }
    if (this.windows.size >= REFUSAL_LOG_MAX_SUBJECTS) {
      this.overflow += 1;
      return;
    }
    this.windows.set(subject, { until: now + WINDOW_MS, refused: 0 });
    reply.log.info(
      { req: request, statusCode: reply.statusCode, subject, responseTime: reply.elapsedTime },
      `request refused (429); further refusals of this ${subject.startsWith('key:') ? 'key' : 'address'} are counted and logged once per ${REFUSAL_LOG_WINDOW_SECONDS} s`,
    );
  }
}
