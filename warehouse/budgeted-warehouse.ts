// The choke point of the request budget (core/budget.ts): every statement that the doors can
// cause (analytics reads on the serving session, client SQL, export chunks) passes a
// BudgetedWarehouse, which runs it under the budget it was bound to with `under(budget)`.
// The binding is explicit (a door binds its request's budget, an export job its owner's, a
// background task the operator's), never found through an async context: Node 20's
// AsyncLocalStorage runs a hook for every promise of the process, which cost the cheapest
// requests about 12 % of their throughput (bench/RESULTS.md). An unbound warehouse refuses
// every statement (fail closed): a new door, or a route that forgot, cannot reach the engine
// without a budget, and cannot borrow another request's.
import { Budget, tightened } from '../core/budget.ts';
import { AppError, Errors } from '../core/errors.ts';
import type { Plan } from '../core/plans.ts';
import type { PlanLanes } from './plan-lanes.ts';
import type { InsertOptions, QueryOptions, StatementStats, Warehouse } from './warehouse.ts';

/** A warehouse whose statements run under a budget it is given: `under` binds one. */
export interface BudgetBinding {
  under(budget: Budget | null | undefined): Warehouse;
}

export const isBudgetBinding = (wh: Warehouse): wh is Warehouse & BudgetBinding => typeof (wh as Partial<BudgetBinding>).under === 'function';

/** `wh` bound to `budget` when it takes one (a plain warehouse, as tests and CLIs open, is used as it is). */
export const boundTo = (wh: Warehouse, budget: Budget | null | undefined): Warehouse => (isBudgetBinding(wh) ? wh.under(budget) : wh);

/** The operator's budget: background work (live streams' reads, start-up) is bounded too, never unlimited. */
export const operatorBudget = (): Budget => new Budget('enterprise', 'operator');

/** The statement's options with its budget's limits applied; throws when there is no budget. */
function budgeted(budget: Budget | undefined, label: string, sql: string, options: QueryOptions | undefined, answerLimited: boolean): QueryOptions {
  if (budget === undefined) {
    // A programming error, not a client's: the route reached the engine without binding a budget.
    throw new AppError(Errors.internal, 'Internal error', { cause: new Error(`a ${label} statement ran without a budget (bind one with under())`) });
  }
  // Parsing reads nothing; settings would change the tree it prints. Still only under a budget.
  if (options?.parseOnly === true && /^\s*EXPLAIN\s+AST\b/i.test(sql)) return options;
  if (budget.remainingSeconds() <= 0) {
    throw new AppError(Errors.queryTimeout, `the request ran past its ${budget.door} time budget; ask for less (a shorter range, fewer records per page)`);
  }
  // What the statement read goes on the request's ledger (the answer's statistics), and to the caller's own listener.
  const own = options?.onStats;
  const onStats = (s: StatementStats): void => {
    budget.recordRead(s.rowsRead, s.bytesRead);
    own?.(s);
  };
  return { ...options, onStats, settings: tightened(options?.settings, budget.engineSettings(answerLimited)) };
}

const timedOutWaiting = (budget: Budget): AppError =>
  new AppError(
    Errors.queryTimeout,
    `the request waited past its ${budget.door} time budget for its plan's turn on the engine; retry shortly, or ask for less`,
    { retryAfterSeconds: 1 },
  );

export class BudgetedWarehouse implements Warehouse, BudgetBinding {
  constructor(
    private readonly inner: Warehouse,
    /** Names the session in the refusal's log line (e.g. "analytics", "sql", "export"). */
    private readonly label: string,
    /** Whether rows this warehouse returns become answers (bounded by the door's answer bytes) or files. */
    private readonly answerLimited = true,
    /** Per-plan shares of the session (the serving session's); none where a gate of its own shares it. */
    private readonly lanes?: PlanLanes,
    /** Sessions of their own for some plans' statements (the free plan's, on the serving side), so they never queue the others'. */
    private readonly planSessions: Partial<Record<Plan, Warehouse>> = {},
    /** The budget every statement runs under; none: every statement is refused. */
    private readonly budget?: Budget,
  ) {}

  /** This session with every statement under `budget` (null or undefined: refused, as unbound). */
  under(budget: Budget | null | undefined): BudgetedWarehouse {
    return new BudgetedWarehouse(this.inner, this.label, this.answerLimited, this.lanes, this.planSessions, budget ?? undefined);
  }

  /** The session this warehouse's statements run on; a side session (QueryOptions.sideSession) is the serving warehouse's own. */
  private session(options?: QueryOptions): Warehouse {
    const budget = this.budget;
    if (options?.sideSession !== undefined) return this.inner;
    return (budget === undefined || budget.door === 'operator' ? undefined : this.planSessions[budget.plan]) ?? this.inner;
  }

  /**
   * Wait for the budget's plan's turn on the session (operators never wait); the release, or
   * undefined when the wait passed the budget's time. A statement on a side session takes no
   * turn: it does not run on the shared session, and its caller bounds how many run at once
   * (a point-read batch waiting for its leader's plan held every plan's point reads).
   */
  private async turn(options?: QueryOptions): Promise<(() => void) | undefined> {
    const budget = this.budget;
    if (options?.sideSession !== undefined || this.lanes === undefined || budget === undefined || budget.door === 'operator') return () => {};
    return this.lanes.enter(budget.plan, budget.remainingSeconds() * 1000);
  }

  private async inTurn<T>(work: () => Promise<T>, options: QueryOptions): Promise<T> {
    const release = await this.turn(options);
    if (release === undefined) throw timedOutWaiting(this.budget!);
    try {
      return await work();
    } finally {
      release();
    }
  }

  get transport(): Warehouse['transport'] {
    return this.inner.transport;
  }

  get cluster(): Warehouse['cluster'] {
    return this.inner.cluster;
  }

  /**
   * Whether a statement's result bytes are capped by the budget's answer bytes: a coalesced
   * point read on a side session serves the lookups of many requests (up to
   * RECORD_LOOKUP_MAX_KEYS keys), so the first asker's answer cap (a batch member's is 1 MiB)
   * would fail every lookup sharing it; each asker's own answer is still held to its budget.
   */
  private capsResult(options?: QueryOptions): boolean {
    return this.answerLimited && options?.sideSession === undefined;
  }

  async query<T>(sql: string, options?: QueryOptions): Promise<T[]> {
    const budgetedOptions = budgeted(this.budget, this.label, sql, options, this.capsResult(options));
    return this.inTurn(() => this.session(budgetedOptions).query<T>(sql, budgetedOptions), budgetedOptions);
  }

  async queryText(sql: string, format: string, options?: QueryOptions): Promise<string> {
    const budgetedOptions = budgeted(this.budget, this.label, sql, options, this.capsResult(options));
    return this.inTurn(() => this.session(budgetedOptions).queryText(sql, format, budgetedOptions), budgetedOptions);
  }

  async *stream(sql: string, format: string, options?: QueryOptions): AsyncIterable<Uint8Array> {
    const budgetedOptions = budgeted(this.budget, this.label, sql, options, this.capsResult(options));
    const release = await this.turn(budgetedOptions);
    if (release === undefined) throw timedOutWaiting(this.budget!);
    try {
      yield* this.session(budgetedOptions).stream(sql, format, budgetedOptions);
    } finally {
      release();
    }
  }

  // A statement that writes (an export chunk's INSERT … SELECT) reads under the budget too.
  async exec(sql: string, options?: QueryOptions): Promise<void> {
    const budgetedOptions = budgeted(this.budget, this.label, sql, options, false);
    return this.inTurn(() => this.session(budgetedOptions).exec(sql, budgetedOptions), budgetedOptions);
  }

  // Inserts are the pipeline's: rows it was given, nothing read.
  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void> {
    return this.inner.insert(table, rows, options);
  }

  insertBytes(table: string, data: Uint8Array, format: string, options?: InsertOptions): Promise<void> {
    return this.inner.insertBytes(table, data, format, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
