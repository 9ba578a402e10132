// The choke point of the request budget (core/budget.ts): every statement that the doors can
// cause (analytics reads on the serving session, client SQL, export chunks) passes a
// BudgetedWarehouse, which runs it under the budget of the request it serves, found through
// the async context. A statement issued while serving an HTTP request that was never given
// a budget is refused (fail closed): a new door, or a route that forgot, cannot reach the
// engine unbudgeted. Work outside any request (ingest observers, start-up, CLIs, tests)
// runs under the operator budget: bounded too, never unlimited.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Budget, tightened } from '../core/budget.ts';
import { AppError, Errors } from '../core/errors.ts';
import type { Plan } from '../core/plans.ts';
import type { PlanLanes } from './plan-lanes.ts';
import type { InsertOptions, QueryOptions, StatementStats, Warehouse } from './warehouse.ts';

/** A request's slot for its budget: made when the request arrives, filled once it is authenticated. */
interface RequestSlot {
  budget: Budget | undefined;
}

export class BudgetScope {
  private readonly als = new AsyncLocalStorage<RequestSlot>();

  /** Run `fn` (and everything it starts) as one request, with `budget` or none yet. */
  run<T>(budget: Budget | undefined, fn: () => T): T {
    return this.als.run({ budget }, fn);
  }

  /** Give the current request its budget (after authentication); a no-op outside a request. */
  assign(budget: Budget): void {
    const slot = this.als.getStore();
    if (slot !== undefined) slot.budget = budget;
  }

  /** The current request's budget: undefined inside a request that has none (refused), the operator budget outside any request. */
  current(): Budget | undefined {
    const slot = this.als.getStore();
    if (slot === undefined) return new Budget('enterprise', 'operator');
    return slot.budget;
  }
}

/** The statement's options with its budget's limits applied; throws when the request has no budget. */
function budgeted(scope: BudgetScope, label: string, sql: string, options: QueryOptions | undefined, answerLimited: boolean): QueryOptions {
  const budget = scope.current();
  if (budget === undefined) {
    // A programming error, not a client's: the route reached the engine without passing the budget.
    throw new AppError(Errors.internal, 'Internal error', { cause: new Error(`a ${label} statement ran in a request without a budget`) });
  }
  // Parsing reads nothing; settings would change the tree it prints. Still only inside a budget.
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
  new AppError(Errors.queryTimeout, `the request waited past its ${budget.door} time budget for its plan's turn on the engine; retry shortly, or ask for less`, { retryAfterSeconds: 1 });

export class BudgetedWarehouse implements Warehouse {
  constructor(
    private readonly inner: Warehouse,
    private readonly scope: BudgetScope,
    /** Names the session in the refusal's log line (e.g. "analytics", "sql", "export"). */
    private readonly label: string,
    /** Whether rows this warehouse returns become answers (bounded by the door's answer bytes) or files. */
    private readonly answerLimited = true,
    /** Per-plan shares of the session (the serving session's); none where a gate of its own shares it. */
    private readonly lanes?: PlanLanes,
    /** Sessions of their own for some plans' statements (the free plan's, on the serving side), so they never queue the others'. */
    private readonly planSessions: Partial<Record<Plan, Warehouse>> = {},
  ) {}

  /** The session the current request's statements run on. */
  private session(): Warehouse {
    const budget = this.scope.current();
    return (budget === undefined || budget.door === 'operator' ? undefined : this.planSessions[budget.plan]) ?? this.inner;
  }

  /** Run `work` once the statement's plan has its turn on the session (operators never wait). */
  private async inTurn<T>(work: () => Promise<T>): Promise<T> {
    const budget = this.scope.current();
    if (this.lanes === undefined || budget === undefined || budget.door === 'operator') return work();
    const release = await this.lanes.enter(budget.plan, budget.remainingSeconds() * 1000);
    if (release === undefined) throw timedOutWaiting(budget);
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

  async query<T>(sql: string, options?: QueryOptions): Promise<T[]> {
    const budgetedOptions = budgeted(this.scope, this.label, sql, options, this.answerLimited);
    return this.inTurn(() => this.session().query<T>(sql, budgetedOptions));
  }

  async queryText(sql: string, format: string, options?: QueryOptions): Promise<string> {
    const budgetedOptions = budgeted(this.scope, this.label, sql, options, this.answerLimited);
    return this.inTurn(() => this.session().queryText(sql, format, budgetedOptions));
  }

  async *stream(sql: string, format: string, options?: QueryOptions): AsyncIterable<Uint8Array> {
    const budgetedOptions = budgeted(this.scope, this.label, sql, options, this.answerLimited);
    const budget = this.scope.current();
    const release = this.lanes === undefined || budget === undefined || budget.door === 'operator'
      ? () => {}
      : await this.lanes.enter(budget.plan, budget.remainingSeconds() * 1000);
    if (release === undefined) throw timedOutWaiting(budget!);
    try {
      yield* this.session().stream(sql, format, budgetedOptions);
    } finally {
      release();
    }
  }

  // A statement that writes (an export chunk's INSERT … SELECT) reads under the budget too.
  async exec(sql: string, options?: QueryOptions): Promise<void> {
    const budgetedOptions = budgeted(this.scope, this.label, sql, options, false);
    return this.inTurn(() => this.session().exec(sql, budgetedOptions));
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
