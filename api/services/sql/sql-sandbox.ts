// Client SQL, end to end: a slot on an engine session of its own (never the serving one),
// the guard, the cost check, then the run with the engine's limits. Every statement of a
// client request, parsing included, runs on its slot, so a heavy or hostile query can slow
// only the sandbox, and the sandbox has a fixed number of slots, each query one thread.
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { isPlan, planShareOf, PLAN_JOIN_ROWS, PLAN_PRIORITY, type Plan } from '../../../core/plans.ts';
import { ClickHouseCode, WarehouseError, type Settings, type Warehouse } from '../../../warehouse/warehouse.ts';
import { boundTo } from '../../../warehouse/budgeted-warehouse.ts';
import { ConcurrencyGate } from './concurrency-gate.ts';
import { leasedStream, SQL_MAX_RESPONSE_BYTES, tooLarge } from './leased-stream.ts';
import { loadFunctionPolicy, type FunctionPolicy } from './function-policy.ts';
import { JoinStats } from './join-stats.ts';
import { budgetSettings, estimateSqlCost, overBudgetMessage, PLAN_QUERY_BUDGET, type SqlCostEstimate } from './query-cost.ts';
import { engineMessage, prepareQuery, PUBLISHED_TABLES, SQL_MAX_LIMIT, type GuardContext, type PreparedQuery } from './sql-guard.ts';
import { REAL_TABLES_REUSE_MS, SQL_RUN_AST_LIMITS } from '../../../core/limits/sql.ts';
import { ENGINE_LOWEST_PRIORITY } from '../../../core/limits/process.ts';

export { SQL_MAX_RESPONSE_BYTES };

export interface SandboxLimits {
  timeoutSeconds: number;
  maxMemoryBytes: number;
  /** Threads one client query may use. */
  maxThreads: number;
  queuePerKey: number;
  queueTotal: number;
  /**
   * Server mode with the dedicated user of deploy/clickhouse/sql-sandbox-user.sql: its
   * profile holds readonly = 2 CONST, so the service must not send a readonly of its own.
   */
  readonlyByUser?: boolean;
}

export interface Caller {
  /** Whose queries share the per-key limit (the API key id). */
  key: string;
  plan: Plan;
  /** The request's budget (core/budget.ts): a query's cost is charged on it before it runs, and
   *  every statement runs under it (none: refused, warehouse/budgeted-warehouse.ts). */
  budget?: Budget;
}

export interface RunOptions {
  /**
   * Row cap of the result and largest LIMIT accepted; only internal callers (benchmarks,
   * exports) lift it above SQL_MAX_LIMIT, with the byte budget lifted too. Clients never.
   */
  maxResultRows?: number;
}

const quote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const invalid = (message: string, cause?: unknown): AppError => new AppError(Errors.invalidQuery, message, { cause });
/** A batch member's query given up (the member cancelled, or its request ended) before or while it ran. */
const givenUp = (): AppError =>
  new AppError(Errors.queryTimeout, 'the request ended (its client left, it ran past its time budget, or the call was cancelled) before this query finished');

export class SqlSandbox {
  private readonly gate: ConcurrencyGate<Warehouse>;
  private policy: Promise<FunctionPolicy> | undefined;
  private realTablesCache: { at: number; names: Promise<ReadonlySet<string>> } | undefined;
  /** Key statistics of the published tables for the join pricing, measured on demand and kept a while. */
  private readonly joinStats = new JoinStats();
  /** The engine's current database, once known: engine messages shown to clients never name it. */
  private database = 'default';

  constructor(
    private readonly sessions: readonly Warehouse[],
    private readonly limits: SandboxLimits,
    /** Protocols a client may see (inactive ones are hidden, as on every interface). */
    private readonly visibleProtocols: () => Promise<string[]>,
  ) {
    this.gate = new ConcurrencyGate(sessions, {
      queuePerKey: limits.queuePerKey,
      queueTotal: limits.queueTotal,
      maxWaitMs: limits.timeoutSeconds * 1000,
      // A wait, a run and the CSV stream's own deadline, with room: no request holds a session longer.
      maxHoldMs: 3 * limits.timeoutSeconds * 1000,
      // Fair shares between plans (core/plans.ts): free keys' heavy queries never take every session.
      groupCap: (plan, slots) => (isPlan(plan) ? planShareOf(plan, slots) : slots),
      groupPriority: (plan) => (isPlan(plan) ? PLAN_PRIORITY[plan] : 0),
    });
  }

  /** Running and waiting client queries (for metrics and tests). */
  stats(): { running: number; waiting: number } {
    return this.gate.stats();
  }

  /**
   * Check, cost, limit and run a client's SELECT; answers the JSON body
   * `{"data":[rows…],"count":n,"query":"…"}` as text. The engine's JSONEachRow output is
   * read as a stream and cut as soon as it passes the byte budget (JSON escaping can make
   * the text several times the engine's result bytes), and the rows are never parsed and
   * re-serialised here: each line already is a row object, so the body is assembled around
   * them, and a big answer costs this process's event loop almost nothing.
   */
  async json(caller: Caller, text: unknown): Promise<string> {
    const signal = caller.budget?.signal;
    const lease = await this.gate.acquire(caller.key, caller.plan, signal, givenUp);
    try {
      const wh = boundTo(lease.slot, caller.budget);
      const prepared = await this.prepare(wh, caller, text);
      // 64-bit integers as strings (SPEC: "numeric values can arrive as strings"): JSON numbers
      // lose precision above 2^53, and newer engines no longer quote them by default.
      const settings = await this.settings(caller.plan, {}, { output_format_json_quote_64bit_integers: 1 });
      const chunks: Buffer[] = [];
      let bytes = 0;
      // A batch member's answer stops at what it reserved (its budget's answer bytes), not at
      // the door's: the batch may run it again with more (api/services/answers/answer-batch.ts).
      const cap = Math.min(SQL_MAX_RESPONSE_BYTES, caller.budget?.answerBytes ?? Infinity);
      let iterator: AsyncIterator<Uint8Array> | undefined;
      try {
        iterator = wh.stream(await this.materialized(wh, prepared.executed, settings), 'JSONEachRow', { settings, signal })[Symbol.asyncIterator]();
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          bytes += next.value.byteLength;
          if (bytes > cap) throw tooLarge(undefined, cap < SQL_MAX_RESPONSE_BYTES ? cap : undefined);
          chunks.push(next.value as Buffer);
        }
      } catch (err) {
        throw this.queryError(err, {}, caller);
      } finally {
        await iterator?.return?.();
      }
      // JSONEachRow: one object per line, newlines inside values escaped as \n.
      const lines = Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
      const count = lines === '' ? 0 : lines.split('\n').length;
      return `{"data":[${lines.replaceAll('\n', ',')}],"count":${count},"query":${JSON.stringify(prepared.executed)}}`;
    } finally {
      lease.release();
    }
  }

  /**
   * Check, cost, limit and stream a client's SELECT as RFC 4180 CSV with a header row. The
   * first chunk is awaited here so that errors the engine reports up front still become a
   * proper error answer; later failures can only cut the stream. The slot stays taken until
   * the stream ends, and a stream not read to its end within the time-out is cancelled.
   */
  async csv(caller: Caller, text: unknown, options: RunOptions = {}): Promise<{ query: string; body: AsyncIterable<Uint8Array> }> {
    const signal = caller.budget?.signal;
    const lease = await this.gate.acquire(caller.key, caller.plan, signal, givenUp);
    let handedOver = false;
    try {
      const wh = boundTo(lease.slot, caller.budget);
      const prepared = await this.prepare(wh, caller, text, options);
      const settings = await this.settings(caller.plan, options, {
        // RFC 4180: CRLF line ends; NULL as an empty field rather than ClickHouse's \N.
        output_format_csv_crlf_end_of_line: 1,
        format_csv_null_representation: '',
      });
      let iterator: AsyncIterator<Uint8Array>;
      let pending: IteratorResult<Uint8Array> | undefined;
      try {
        const runnable = options.maxResultRows === undefined ? await this.materialized(wh, prepared.executed, settings) : prepared.executed;
        iterator = wh.stream(runnable, 'CSVWithNames', { settings, signal })[Symbol.asyncIterator]();
        pending = await iterator.next();
      } catch (err) {
        throw this.queryError(err, options, caller);
      }
      handedOver = true;
      return { query: prepared.executed, body: leasedStream(iterator, pending, lease, this.limits.timeoutSeconds * 1000, options.maxResultRows === undefined) };
    } finally {
      if (!handedOver) lease.release();
    }
  }

  /** The cost of a query for `plan` without running it (GraphQL's queryComplexity shares this path). */
  async cost(caller: Caller, text: unknown): Promise<SqlCostEstimate & { prepared: PreparedQuery }> {
    const lease = await this.gate.acquire(caller.key, caller.plan);
    try {
      const { prepared, cost } = await this.checkAndCost(boundTo(lease.slot, caller.budget), caller, text, {});
      return { ...cost, prepared };
    } finally {
      lease.release();
    }
  }

  /**
   * A client's SELECT checked for an export job (api/services/exports/): the same guard and cost
   * check as any client query, with `maxRows` (the plan's export cap) as the largest LIMIT
   * and no LIMIT injected; answers the text to run, its columns and the settings to run it
   * with. The export writes the rows to files, so the statement around the query is an
   * INSERT: these settings leave out readonly and the answer-size limits, and keep the
   * visibility filter, the read budget and the engine limits. The guard remains the wall
   * (as for every client query in embedded mode, DESIGN section 4).
   */
  async prepareExport(caller: Caller, text: unknown, maxRows: number): Promise<{ sql: string; columns: { name: string; type: string }[]; settings: Settings }> {
    const lease = await this.gate.acquire(caller.key, caller.plan);
    try {
      const wh = boundTo(lease.slot, caller.budget);
      const prepared = await this.prepare(wh, caller, text, { maxResultRows: maxRows });
      // The guard appends LIMIT 1000 to a query without one; an export wants every row.
      const sql = prepared.injectedLimit ? String(text).trim() : prepared.executed;
      const {
        readonly: _r,
        max_result_rows: _mr,
        max_result_bytes: _mb,
        result_overflow_mode: _ro,
        ...settings
      } = await this.settings(caller.plan, { maxResultRows: maxRows }, {});
      let columns: { name: string; type: string }[];
      try {
        columns = await wh.query<{ name: string; type: string }>(`DESCRIBE TABLE (\n${sql}\n)`, { settings: { ...settings, readonly: 1 } });
      } catch (err) {
        throw this.queryError(err, { maxResultRows: maxRows });
      }
      return { sql, columns: columns.map((c) => ({ name: c.name, type: c.type })), settings };
    } finally {
      lease.release();
    }
  }

  /** The guard, then the cost check: refused before running when over the plan's budget. */
  private async prepare(wh: Warehouse, caller: Caller, text: unknown, options: RunOptions = {}): Promise<PreparedQuery> {
    const { prepared, cost } = await this.checkAndCost(wh, caller, text, options);
    // Not `score > budget`: a score that is no number is refused too.
    if (!(cost.score <= PLAN_QUERY_BUDGET[caller.plan])) throw invalid(overBudgetMessage(cost, caller.plan));
    try {
      caller.budget?.charge(cost.score, 'the query');
    } catch (err) {
      throw invalid((err as Error).message);
    }
    return prepared;
  }

  private async checkAndCost(wh: Warehouse, caller: Caller, text: unknown, options: RunOptions): Promise<{ prepared: PreparedQuery; cost: SqlCostEstimate }> {
    const prepared = await prepareQuery(this.guardContext(wh), text, options.maxResultRows ?? SQL_MAX_LIMIT);
    try {
      // Joins are priced by what they produce (join-cost.ts), not by the cross-join formula.
      const settings = await this.settings(caller.plan, options, {});
      return { prepared, cost: await estimateSqlCost(wh, prepared, settings, this.joinStats, PLAN_QUERY_BUDGET[caller.plan]) };
    } catch (err) {
      throw this.queryError(err, options);
    }
  }

  /**
   * The query wrapped so that every result column is materialized. The engine's
   * max_result_bytes counts a constant column once, whatever the row count, so
   * `SELECT repeat(…) FROM t LIMIT 30` would pass it and then be formatted into gigabytes;
   * materialized, the column counts at its real size and the engine refuses it before
   * formatting. Names are kept (read with DESCRIBE, which does not run the query).
   */
  private async materialized(wh: Warehouse, sql: string, settings: Settings): Promise<string> {
    const columns = await wh.query<{ name: string }>(`DESCRIBE TABLE (\n${sql}\n)`, { settings });
    if (columns.length === 0) return sql;
    const id = (name: string): string => `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
    return `SELECT ${columns.map((c) => `materialize(${id(c.name)}) AS ${id(c.name)}`).join(', ')} FROM (\n${sql}\n)`;
  }

  private guardContext(wh: Warehouse): GuardContext {
    return {
      wh,
      realTables: () => this.realTables(wh),
      functions: () => {
        this.policy ??= loadFunctionPolicy(wh);
        this.policy.catch(() => (this.policy = undefined));
        return this.policy;
      },
    };
  }

  private realTables(wh: Warehouse): Promise<ReadonlySet<string>> {
    // Table names change only with migrations; a minute of caching is plenty.
    if (!this.realTablesCache || Date.now() - this.realTablesCache.at > REAL_TABLES_REUSE_MS) {
      const names = wh
        .query<{ name: string; db: string }>('SELECT name, currentDatabase() AS db FROM system.tables WHERE database = currentDatabase()')
        .then((rows) => {
          this.database = rows[0]?.db ?? this.database;
          return new Set(rows.map((r) => r.name)) as ReadonlySet<string>;
        });
      names.catch(() => (this.realTablesCache = undefined));
      this.realTablesCache = { at: Date.now(), names };
    }
    return this.realTablesCache.names;
  }

  /** Engine settings every client query runs with. */
  async settings(plan: Plan, options: RunOptions, extra: Settings): Promise<Settings> {
    const visible = await this.visibleProtocols();
    const filter = visible.length === 0 ? 'false' : `protocol_name IN (${visible.map(quote).join(', ')})`;
    const filters = `{${PUBLISHED_TABLES.map((t) => `${quote(t)}: ${quote(filter)}`).join(', ')}}`;
    const internal = options.maxResultRows !== undefined;
    return {
      max_execution_time: this.limits.timeoutSeconds,
      timeout_overflow_mode: 'throw',
      max_result_rows: options.maxResultRows ?? SQL_MAX_LIMIT,
      result_overflow_mode: 'throw',
      // Few rows can still be huge (groupArray over everything, long random strings). Half
      // the answer budget: JSON escaping can multiply the bytes (a control character becomes
      // six), and the streamed text is cut at the full budget anyway; a smaller block here
      // bounds what the engine formats before that cut.
      max_result_bytes: internal ? 0 : SQL_MAX_RESPONSE_BYTES / 2,
      max_memory_usage: this.limits.maxMemoryBytes,
      max_threads: this.limits.maxThreads,
      // Client SQL yields the CPU to serving: its engine threads run at the lowest priority
      // (nice 19; raising a thread's nice value needs no privilege).
      os_thread_priority: ENGINE_LOWEST_PRIORITY,
      ...budgetSettings(plan),
      max_bytes_in_join: Math.floor(this.limits.maxMemoryBytes / 2),
      // The engine bounds a join's right side only (26.7 has no limit on the rows a join
      // produces: that is priced before running); time and memory bound the rest.
      max_rows_in_join: PLAN_JOIN_ROWS[plan],
      join_overflow_mode: 'throw',
      max_ast_depth: SQL_RUN_AST_LIMITS.maxAstDepth,
      max_ast_elements: SQL_RUN_AST_LIMITS.maxAstElements,
      max_expanded_ast_elements: SQL_RUN_AST_LIMITS.maxExpandedAstElements,
      max_subquery_depth: SQL_RUN_AST_LIMITS.maxSubqueryDepth,
      additional_table_filters: filters,
      ...extra,
      // Last, so the settings before it are still allowed to change (readonly=1 freezes settings).
      ...(this.limits.readonlyByUser === true ? {} : { readonly: 1 }),
    };
  }

  /** Map an engine failure of a client query to what the client sees (`caller`: a batch member's, given up once its signal aborted and capped at its reservation). */
  private queryError(err: unknown, options: RunOptions, caller?: Caller): AppError {
    if (err instanceof AppError) return err;
    if (caller?.budget?.signal?.aborted === true) return givenUp();
    if (!(err instanceof WarehouseError)) return new AppError(Errors.internal, 'Internal error', { cause: err });
    const t = this.limits.timeoutSeconds;
    switch (err.clickhouseCode) {
      case ClickHouseCode.TIMEOUT_EXCEEDED:
      case ClickHouseCode.QUERY_WAS_CANCELLED:
        return new AppError(
          Errors.queryTimeout,
          `the query ran longer than the ${t} s time-out and was cancelled by the engine; narrow it (a date range on transactions, or the hourly tables)`,
          { cause: err },
        );
      case ClickHouseCode.TOO_MANY_ROWS_OR_BYTES:
      case ClickHouseCode.TOO_MANY_ROWS:
        if (/to read/i.test(err.message)) {
          return invalid('the query read more rows than its plan allows per query: narrow the date range, add a protocol, or read the hourly tables', err);
        }
        if (/max bytes|result bytes/i.test(err.message)) {
          // The engine's cap is the smaller of the sandbox's (half the door's) and the budget's.
          const member = caller?.budget?.answerBytes;
          return tooLarge(err, member !== undefined && member < SQL_MAX_RESPONSE_BYTES / 2 ? member : undefined);
        }
        return invalid(`the result has more than ${options.maxResultRows ?? SQL_MAX_LIMIT} rows: add a LIMIT (at most ${SQL_MAX_LIMIT})`, err);
      case ClickHouseCode.MEMORY_LIMIT_EXCEEDED:
        return invalid('the query needs more memory than a query may use: aggregate more, select fewer columns or add a narrower WHERE', err);
      case ClickHouseCode.READONLY:
        return invalid('the query tries something a read-only query may not do', err);
      case undefined:
        return new AppError(Errors.internal, 'Internal error', { cause: err });
      default:
        return invalid(engineMessage(err, this.database), err);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.close()));
  }
}
