// One request budget, whatever the door (DESIGN section 7, "One budget, one choke point").
// A request declares its plan and its door; the budget derives every figure from the plan
// tables (core/plans.ts) and the SPEC limits (core/limits/): rows and bytes the engine may
// read, rows a join may hold, answer bytes, wall time, memory, and the cost ledger checked
// before a statement runs. The warehouse applies it to every statement of the request
// (warehouse/budgeted-warehouse.ts); doors read their answer budget and cost budget from it.
import { ANSWER_BUDGET_BYTES, DOOR_WALL_MS, type Door } from './limits/answers.ts';
import { SQL_BYTES_PER_BUDGET_ROW, SQL_TIMEOUT_SECONDS } from './limits/sql.ts';
import { PLAN_JOIN_ROWS, PLAN_MEMORY_BYTES, PLAN_QUERY_BUDGET, type Plan } from './plans.ts';

export type { Door };

/** Bytes per budgeted row for max_bytes_to_read: wide rows (accounts, logs) are ~600 bytes. */
export const BYTES_PER_BUDGET_ROW = SQL_BYTES_PER_BUDGET_ROW;

/** Engine settings a budget sets on a statement (a subset of the warehouse's Settings). */
export type BudgetSettings = Record<string, number | string>;

/** Answer bytes held per plan across the process's requests (api/services/access/answer-memory.ts). */
export interface AnswerMemory {
  reserve(plan: Plan, bytes: number): boolean;
  release(plan: Plan, bytes: number): void;
}

/**
 * An answer's statistics (issue 26, "The cost of every answer"): the request's time so far,
 * what its statements read as the engine reported it, and its cost in the plan's units (the
 * cost charged before running, or the rows actually read when that is more: a door that
 * prices nothing up front still costs what it read).
 */
export interface AnswerStats {
  elapsedMs: number;
  rowsRead: number;
  bytesRead: number;
  cost: number;
}

/** What a statement or answer would cost before it runs, compared with the budget's cost figure. */
export class OverBudget extends Error {
  constructor(
    readonly requested: number,
    readonly budget: number,
    message: string,
  ) {
    super(message);
    this.name = 'OverBudget';
  }
}

/**
 * What one request has spent and holds, shared by its budget and its members' (Budget.member):
 * a batch's calls run under one ledger, however many answer caps they are given.
 */
class Ledger {
  spentCost = 0;
  heldBytes = 0;
  /** The request's response has ended (releaseAnswers): nothing more is built for it. */
  ended = false;
  rowsRead = 0;
  bytesRead = 0;
  frozen: AnswerStats | undefined;
  /** Work of the request still running (Budget.work), and what waits for none to run (whenIdle). */
  working = 0;
  readonly idle: (() => void)[] = [];
  /** Aborted when the request's response has ended: its members' own statements stop (Budget.signal). */
  ends: AbortController | undefined;
}

/** The reason a request's members' signal aborts with: one object, not an error with a stack per request. */
const REQUEST_ENDED = Object.freeze({ name: 'AbortError', message: 'the request ended' });

export class Budget {
  /** Rows the engine may read per statement (and, as the cost check's budget, per request). */
  readonly readRows: number;
  readonly readBytes: number;
  /** Rows one join may hold in memory (the engine's max_rows_in_join). */
  readonly joinRows: number;
  /** Bytes one answer of this door may carry (a batch member's: the bytes reserved for it). */
  readonly answerBytes: number;
  /** Engine memory one statement may use. */
  readonly memoryBytes: number;
  /** Longest one statement may run (SPEC's 30 s applies to a statement). */
  readonly statementSeconds: number;
  /** When the request started, and when it must be done (epoch ms). */
  readonly start: number;
  readonly deadline: number;
  private readonly ledger: Ledger;
  /** Where answer bytes are held per plan (the process's pool); none outside the HTTP edge. */
  answerMemory: AnswerMemory | undefined;
  /**
   * A batch member's: aborted once the member is cancelled or its request's response has ended.
   * Client SQL of the member (its own lease, never shared) is given up while it waits for its
   * turn, and its statement is sent the signal (a ClickHouse server cancels it; the embedded
   * engine runs a started statement to its end). Shared reads (one read serving several
   * requests) never carry it. Undefined on a request's budget.
   */
  get signal(): AbortSignal | undefined {
    // Made when first asked (client SQL asks): most members never do, and an AbortController per
    // call, aborted at the end of every request, cost the cheapest calls about 40 % of their rate.
    if (!this.isMember) return undefined;
    const l = this.ledger;
    if (l.ends === undefined) {
      l.ends = new AbortController();
      if (l.ended) l.ends.abort(REQUEST_ENDED);
    }
    return this.cancelled === undefined ? l.ends.signal : AbortSignal.any([l.ends.signal, this.cancelled]);
  }

  /** A member's own cancellation (an MCP call's), joined with its request's end in `signal`. */
  private readonly cancelled: AbortSignal | undefined;
  private readonly isMember: boolean;

  constructor(
    readonly plan: Plan,
    readonly door: Door,
    now: number = Date.now(),
    /** A member's: the request's ledger and the answer bytes reserved for it (Budget.member). */
    member?: { ledger: Ledger; answerBytes: number; start: number; deadline: number; cancelled?: AbortSignal },
  ) {
    this.readRows = PLAN_QUERY_BUDGET[plan];
    this.readBytes = this.readRows * BYTES_PER_BUDGET_ROW;
    this.joinRows = PLAN_JOIN_ROWS[plan];
    this.answerBytes = member?.answerBytes ?? ANSWER_BUDGET_BYTES[door];
    this.memoryBytes = PLAN_MEMORY_BYTES[plan];
    this.statementSeconds = SQL_TIMEOUT_SECONDS;
    this.start = member?.start ?? now;
    this.deadline = member?.deadline ?? now + DOOR_WALL_MS[door];
    this.ledger = member?.ledger ?? new Ledger();
    this.cancelled = member?.cancelled;
    this.isMember = member !== undefined;
  }

  /**
   * The budget of one member of a batch (api/services/answers/answer-batch.ts): the same request, its
   * costs and reads on the same ledger, but its statements' results and its answer capped at
   * the `answerBytes` reserved for it before it runs.
   */
  member(answerBytes: number, cancelled?: AbortSignal): Budget {
    const m = new Budget(this.plan, this.door, this.start, { ledger: this.ledger, answerBytes, start: this.start, deadline: this.deadline, cancelled });
    m.answerMemory = this.answerMemory;
    return m;
  }

  /**
   * Run `work` as the request's: while it runs, what waits for the request's work to end
   * (whenIdle: its in-flight slot, the answer bytes it holds) waits for it too, even once the
   * response has gone (a member cancelled, a client gone, a deadline answered).
   */
  async work<T>(work: () => Promise<T>): Promise<T> {
    const l = this.ledger;
    l.working += 1;
    try {
      return await work();
    } finally {
      l.working -= 1;
      if (l.working === 0) for (const f of l.idle.splice(0)) f();
    }
  }

  /** Call `f` once none of the request's work runs (at once when none does). */
  whenIdle(f: () => void): void {
    if (this.ledger.working === 0) f();
    else this.ledger.idle.push(f);
  }

  /** Cost units spent by this request so far (estimated rows read plus base costs). */
  get spent(): number {
    return this.ledger.spentCost;
  }

  /** The request's response has ended (answered, or its client gone): nothing more is worth building for it. */
  get ended(): boolean {
    return this.ledger.ended;
  }

  /** Add what one statement of this request read (the warehouse reports it: budget-scope.ts). */
  recordRead(rows: number, bytes: number): void {
    if (Number.isFinite(rows) && rows > 0) this.ledger.rowsRead += rows;
    if (Number.isFinite(bytes) && bytes > 0) this.ledger.bytesRead += bytes;
  }

  /** Rows and bytes read by this request's statements so far. */
  get rowsReadSoFar(): number {
    return this.ledger.rowsRead;
  }

  /** The cost in the plan's units: what was charged, or the rows read when more. */
  get cost(): number {
    return Math.round(Math.max(this.ledger.spentCost, this.ledger.rowsRead));
  }

  /**
   * The answer's statistics, taken once: the first call (when the answer's body is built)
   * fixes them, so its body and its headers say the same.
   */
  stats(now: number = Date.now()): AnswerStats {
    const l = this.ledger;
    l.frozen ??= { elapsedMs: Math.max(0, now - this.start), rowsRead: l.rowsRead, bytesRead: l.bytesRead, cost: this.cost };
    return l.frozen;
  }

  /**
   * Charge `cost` before the work it prices runs; refused (nothing charged) when the
   * request's total would pass the plan's cost budget. `what` names the work in the message.
   */
  charge(cost: number, what: string): void {
    const total = this.ledger.spentCost + cost;
    if (total > this.readRows) {
      throw new OverBudget(
        total,
        this.readRows,
        `${what} would cost ${Math.round(total)} (estimated rows read plus a base cost); the ${this.plan} plan allows ${this.readRows} per request`,
      );
    }
    this.ledger.spentCost = total;
  }

  /**
   * Hold `bytes` of answer in the plan's answer memory until the request ends (releaseAnswers);
   * false, holding nothing, when the plan's answers in flight would pass it, or when the
   * request has ended (its client gone, or answered by its deadline): an answer built then
   * goes to no one, so none is built.
   */
  reserveAnswer(bytes: number): boolean {
    if (this.ledger.ended) return false;
    if (this.answerMemory === undefined) return true;
    if (!this.answerMemory.reserve(this.plan, bytes)) return false;
    this.ledger.heldBytes += bytes;
    return true;
  }

  /** Give back part of what reserveAnswer held (a member's reservation it did not fill). */
  releaseAnswer(bytes: number): void {
    const l = this.ledger;
    const back = Math.min(bytes, l.heldBytes);
    if (back <= 0) return;
    l.heldBytes -= back;
    this.answerMemory?.release(this.plan, back);
  }

  /**
   * The request's response has ended (sent, or its client gone): nothing more is built for it,
   * its members' own statements stop (signal), and every byte it held goes back, for good, once
   * none of its work runs any more (a member still building holds what it reserved till then).
   */
  releaseAnswers(): void {
    const l = this.ledger;
    l.ended = true;
    l.ends?.abort(REQUEST_ENDED);
    this.whenIdle(() => {
      if (l.heldBytes > 0) this.answerMemory?.release(this.plan, l.heldBytes);
      l.heldBytes = 0;
    });
  }

  /** Seconds left before the request's deadline (may be 0 or less once it has passed). */
  remainingSeconds(now: number = Date.now()): number {
    return (this.deadline - now) / 1000;
  }

  /**
   * The engine limits of one statement run under this budget. `answerLimited`: the
   * statement's rows become an answer (not a file), so its result bytes are bounded too.
   */
  engineSettings(answerLimited: boolean, now: number = Date.now()): BudgetSettings {
    const seconds = Math.max(1, Math.min(this.statementSeconds, Math.ceil(this.remainingSeconds(now))));
    return {
      max_execution_time: seconds,
      timeout_overflow_mode: 'throw',
      max_rows_to_read: this.readRows,
      max_bytes_to_read: this.readBytes,
      read_overflow_mode: 'throw',
      max_memory_usage: this.memoryBytes,
      max_rows_in_join: this.joinRows,
      max_bytes_in_join: Math.floor(this.memoryBytes / 2),
      join_overflow_mode: 'throw',
      ...(answerLimited && Number.isFinite(this.answerBytes) ? { max_result_bytes: this.answerBytes, result_overflow_mode: 'throw' } : {}),
    };
  }
}

/** Numeric limits where a statement's own value and the budget's are both set: the smaller wins. */
const TIGHTEN = new Set([
  'max_execution_time',
  'max_rows_to_read',
  'max_bytes_to_read',
  'max_memory_usage',
  'max_rows_in_join',
  'max_bytes_in_join',
  'max_result_bytes',
]);

/**
 * A statement's settings under a budget: every limit the budget sets is at most the budget's,
 * never loosened (0 means "no limit" to the engine, so it counts as the largest). The
 * statement's own keys keep their order after the budget's, so a trailing `readonly` (which
 * freezes the settings after it) stays last.
 */
export function tightened<S extends Record<string, unknown>>(own: S | undefined, budget: BudgetSettings): S & BudgetSettings {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(budget)) if (own === undefined || !(k in own)) out[k] = v;
  for (const [k, v] of Object.entries(own ?? {})) {
    const b = budget[k];
    if (TIGHTEN.has(k) && typeof b === 'number') {
      const mine = Number(v);
      out[k] = mine > 0 && mine < b ? mine : b;
    } else out[k] = v;
  }
  return out as S & BudgetSettings;
}
