// One batch executor for every door that takes batches (JSON-RPC, MCP, and any later one): the
// members of one request run a few at a time under its budget, and the bytes of each member's
// answer are reserved BEFORE it is built, cumulatively against the door's answer budget and in
// the plan's answer memory (core/budget.ts). A member runs capped at what it reserved (its
// statements' results by the engine's max_result_bytes, its answer by its text), so no answer
// is built that was not reserved. A member the budget cannot hold is refused without running,
// and so is every member after it; once the request has ended (its client gone, its deadline
// passed) or a member is cancelled, no further member starts. Doors word the outcomes.
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { BATCH_CONCURRENCY, BATCH_MEMBER_ENVELOPE_BYTES, BATCH_MEMBER_FIRST_BYTES } from '../../../core/limits/batches.ts';

/**
 * Why a member was not run: the door's answer budget is spent (`overBudget`), the plan's answer
 * memory is full (`busy`), or the request or the member was given up (`ended`: its client gone,
 * its deadline passed, or the member cancelled).
 */
export type Refusal = 'overBudget' | 'busy' | 'ended';

/** A member's outcome: its answer text, what its work threw (for the door to word), or a refusal. */
export type MemberOutcome = { text: string } | { thrown: unknown } | { refused: Refusal };

/** A member's work: its answer as text, built under `budget` (the member's: capped at its reservation; null on a bare app). */
export type MemberWork = (budget: Budget | null) => Promise<string>;

export interface AnswerBatchOptions {
  /** The request's budget (null: a bare app without access control; nothing is held). */
  budget: Budget | null;
  /** Bytes the whole answer may carry (the door's answer budget). */
  answerBytes: number;
  /** Members the request holds: each has BATCH_MEMBER_ENVELOPE_BYTES set aside for its envelope or refusal. */
  members: number;
  /**
   * Bytes of the answer that are not members' own texts, set aside before any member runs: the
   * envelopes and refusals (each echoes its request's id, of any length), answers the door gives
   * without running a member (errors naming what was sent, lists). members ×
   * BATCH_MEMBER_ENVELOPE_BYTES unless set (setAsideBytes, below, computes it for a body).
   */
  setAside?: number;
  /**
   * What a member's answer text costs of the budget (its UTF-8 bytes unless set): a door that
   * carries the text escaped (MCP, in a JSON string) counts what the text becomes there.
   */
  measure?: (text: string) => number;
  /** Members run at most this many at a time (BATCH_CONCURRENCY unless set: tests). */
  concurrency?: number;
  /** A member's first reservation (BATCH_MEMBER_FIRST_BYTES unless set: tests). */
  firstBytes?: number;
}

/** The engine or the door found the answer larger than its cap: the member may be run again with more. */
const tooLarge = (err: unknown): boolean => err instanceof AppError && err.kind === Errors.responseTooLarge;

export class AnswerBatch {
  /** Bytes of the door's budget neither reserved by a running member nor used by a finished one. */
  private free: number;
  private running = 0;
  /** Members waiting to run alone (their second try): no other member starts meanwhile. */
  private waitingAlone = 0;
  /** A member runs alone. */
  private solo = false;
  /** The first member refused for the budget: it and every member after it are refused. */
  private exhaustedAt = Infinity;
  /** Members in the order their run began, and how many of the first ones have their outcome. */
  private started = 0;
  private readonly outcomeKnown: boolean[] = [];
  private known = 0;
  private readonly concurrency: number;
  private readonly firstBytes: number;
  private readonly wakers: (() => void)[] = [];
  private readonly measure: (text: string) => number;

  constructor(private readonly opts: AnswerBatchOptions) {
    this.free = Math.max(0, opts.answerBytes - 2 - (opts.setAside ?? opts.members * BATCH_MEMBER_ENVELOPE_BYTES));
    this.measure = opts.measure ?? utf8Bytes;
    this.concurrency = Math.max(1, opts.concurrency ?? BATCH_CONCURRENCY);
    this.firstBytes = opts.firstBytes ?? BATCH_MEMBER_FIRST_BYTES;
  }

  /**
   * Run one member: wait for its turn, reserve its bytes, run `work` capped at them. Members
   * start in the order their run is called (the doors call it in request order), and their
   * outcomes are as if run one after the other: once one is refused for the budget, every
   * later one is refused too, whatever it would have needed.
   */
  async run(work: MemberWork, cancelled?: AbortSignal): Promise<MemberOutcome> {
    const seq = this.started++;
    // The check and the count in one synchronous step: a slot is never promised to two members.
    while (this.waitingAlone > 0 || this.solo || this.running >= this.concurrency) await this.woken();
    this.running += 1;
    const member = { seq, solo: false, bytes: 0 };
    let outcome: MemberOutcome;
    try {
      outcome = await this.attempts(work, member, cancelled);
    } finally {
      this.running -= 1;
      if (member.solo) this.solo = false;
      this.wake();
    }
    // In request order: an answer after a member refused for the budget is refused as well.
    while (this.known < seq) await this.woken();
    if ('text' in outcome && seq > this.exhaustedAt) {
      this.settle(member.bytes, 0);
      outcome = { refused: 'overBudget' };
    }
    this.outcomeKnown[seq] = true;
    while (this.outcomeKnown[this.known] === true) this.known += 1;
    this.wake();
    return outcome;
  }

  /** Whether the batch can no longer answer (its request ended); `cancelled`: the member's own. */
  private ended(cancelled?: AbortSignal): boolean {
    return this.opts.budget?.ended === true || cancelled?.aborted === true;
  }

  /** The member's first try at its first reservation and, if its answer outgrew it, a second alone with all the batch has left. */
  private async attempts(work: MemberWork, member: Member, cancelled?: AbortSignal): Promise<MemberOutcome> {
    let want = Math.min(this.firstBytes, this.free);
    for (let attempt = 0; ; attempt++) {
      if (this.ended(cancelled)) return { refused: 'ended' };
      if (member.seq > this.exhaustedAt || want <= 0) return this.spent(member);
      if (this.opts.budget !== null && !this.opts.budget.reserveAnswer(want)) return { refused: 'busy' };
      this.free -= want;
      let text: string;
      try {
        // As the request's work: its in-flight slot and answer bytes wait for it, even once the
        // member is cancelled or the request has ended (its client SQL not yet run is given up).
        const budget = this.opts.budget;
        text = budget === null ? await work(null) : await budget.work(() => work(budget.member(want, cancelled)));
      } catch (err) {
        this.settle(want, 0);
        if (!tooLarge(err) || attempt > 0) return { thrown: err };
        // Larger than its first reservation: once the members before it are done, it runs again
        // with everything left, if that is more than it had (else it cannot fit: refused).
        const had = want;
        await this.alone(member);
        want = this.free;
        if (want <= had) return this.spent(member);
        continue;
      }
      const bytes = this.measure(text);
      // Within its reservation (the common case), or past it (the engine's rows capped at the
      // reservation, the JSON around them larger): kept if the batch can hold the rest.
      if (bytes <= want || (await this.extend(want, bytes, member))) {
        this.settle(Math.max(want, bytes), bytes);
        member.bytes = bytes;
        return { text };
      }
      this.settle(want, 0);
      return this.spent(member);
    }
  }

  /** Hold `bytes - want` more for an answer built past its reservation, once the members before it are done. */
  private async extend(want: number, bytes: number, member: Member): Promise<boolean> {
    if (bytes - want > this.free) await this.alone(member);
    if (bytes - want > this.free || this.ended() || member.seq > this.exhaustedAt) return false;
    if (this.opts.budget !== null && !this.opts.budget.reserveAnswer(bytes - want)) return false;
    this.free -= bytes - want;
    return true;
  }

  /** The budget is spent: this member and every member after it are refused. */
  private spent(member: Member): MemberOutcome {
    this.exhaustedAt = Math.min(this.exhaustedAt, member.seq);
    return { refused: 'overBudget' };
  }

  /** `held` bytes were reserved, `used` of them are the answer: the rest goes back to the batch and the plan. */
  private settle(held: number, used: number): void {
    this.free += held - used;
    if (held > used) this.opts.budget?.releaseAnswer(held - used);
  }

  /**
   * Wait until every member before this one has its outcome and no other member runs, then run
   * alone: its slot is given up meanwhile, so members waiting for this never wait for each
   * other; they run alone one after the other, in request order.
   */
  private async alone(member: Member): Promise<void> {
    if (member.solo) return;
    this.running -= 1;
    this.waitingAlone += 1;
    this.wake();
    while (this.running > 0 || this.solo || this.known < member.seq) await this.woken();
    this.waitingAlone -= 1;
    this.running += 1;
    this.solo = true;
    member.solo = true;
  }

  /** Until the next member ends (or a slot is given up). */
  private woken(): Promise<void> {
    return new Promise<void>((resolve) => this.wakers.push(resolve));
  }

  private wake(): void {
    for (const w of this.wakers.splice(0)) w();
  }
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * The bytes to set aside for a batch's envelopes and refusals (AnswerBatchOptions.setAside):
 * BATCH_MEMBER_ENVELOPE_BYTES per request plus what it echoes of itself (its id, as JSON), and
 * `fixed`, the bytes of answers the door gives without running a member.
 */
export function setAsideBytes(ids: readonly unknown[], fixed = 0): number {
  let bytes = fixed;
  for (const id of ids) bytes += BATCH_MEMBER_ENVELOPE_BYTES + (id === undefined ? 0 : utf8Bytes(JSON.stringify(id) ?? ''));
  return bytes;
}

/** One member's place in its batch: its order, whether it runs alone, and the bytes its answer holds. */
interface Member {
  readonly seq: number;
  solo: boolean;
  bytes: number;
}
