// The one interface every part of the service uses to reach ClickHouse. Two transports
// implement it (embedded chDB and a ClickHouse server over HTTP); the SQL is the same.

export type QueryParams = Record<string, unknown>;
export type Settings = Record<string, string | number | boolean>;

export interface QueryOptions {
  /** Values for `{name:Type}` placeholders, bound by the engine, never spliced into SQL. */
  params?: QueryParams;
  /**
   * Embedded: write `params` into the statement as literals (warehouse/literal-params.ts: a
   * fail-closed list of types, strings as hex) rather than binding them. chDB runs every bound
   * statement of the process one after another, whatever its session; a statement without one
   * runs on the serving sessions beside the others. Server: bound as always (the same answer).
   */
  literalParams?: boolean;
  /** Per-query engine settings (readonly, max_execution_time, ...). */
  settings?: Settings;
  /** Abandon the call; with a server it also cancels the query there. */
  signal?: AbortSignal;
  /**
   * The statement only parses (`EXPLAIN AST …`): it reads nothing, so the request budget adds
   * no settings to it (they would become part of the tree it prints). Honoured only for
   * statements that start with EXPLAIN AST (warehouse/budgeted-warehouse.ts).
   */
  parseOnly?: boolean;
  /**
   * Run on side session `n` (0, 1, …) of this warehouse instead of its own. Embedded: a chDB
   * session of its own over the same data directory, opened on first use; a session runs one
   * statement at a time, and sessions run at the same time only for statements without bound
   * parameters (chDB runs every bound statement of the process one after another). So the
   * coalesced point reads (api/analytics/records/signature-lookup.ts) run beside each other and beside
   * the serving session's statements; nor does it wait for a plan's turn on the serving session
   * (budgeted-warehouse.ts). Server: ignored (the server runs statements concurrently).
   */
  sideSession?: number;
  /**
   * Told what the statement read, when the transport knows it (a whole answer: `query`); a
   * streamed statement's reads are not reported by the embedded engine. The request budget's
   * ledger collects them (warehouse/budget-scope.ts) for the answer's statistics.
   */
  onStats?: (stats: StatementStats) => void;
}

/** What one statement read, as the engine reports it. */
export interface StatementStats {
  rowsRead: number;
  bytesRead: number;
}

export interface InsertOptions {
  /** Columns present in the rows; others take their DEFAULT expressions. */
  columns?: readonly string[];
  settings?: Settings;
}

/**
 * A ClickHouse cluster the tables are spread over (CLICKHOUSE_CLUSTER; docs/cluster.md):
 * its name in the servers' remote_servers and the database the service's tables live in.
 */
export interface ClusterTarget {
  name: string;
  database: string;
}

export interface Warehouse {
  readonly transport: 'embedded' | 'server';
  /**
   * Set in cluster mode only: migrations render for it (warehouse/cluster-layout.ts) and view
   * repair deletes on every shard. Unset, everything is exactly the single-node behaviour.
   */
  readonly cluster?: ClusterTarget;
  /** Run a SELECT and return its rows (JSONEachRow semantics: 64-bit integers arrive as strings). */
  query<T = Record<string, unknown>>(sql: string, options?: QueryOptions): Promise<T[]>;
  /** Run a query and return its output in a named ClickHouse format (CSVWithNames, TSV, ...). */
  queryText(sql: string, format: string, options?: QueryOptions): Promise<string>;
  /** Stream a query's output in a named format, chunk by chunk, without buffering it whole. */
  stream(sql: string, format: string, options?: QueryOptions): AsyncIterable<Uint8Array>;
  /** Insert rows as JSONEachRow; one call is one INSERT statement. */
  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void>;
  /**
   * Insert bytes already in a ClickHouse input format (JSONEachRow lines, RowBinary, ...);
   * one call is one INSERT statement. The ingest pipeline hands records over this way
   * without turning them into objects and back.
   */
  insertBytes(table: string, data: Uint8Array, format: string, options?: InsertOptions): Promise<void>;
  /** Run a statement that returns nothing (DDL, INSERT ... SELECT). */
  exec(sql: string, options?: QueryOptions): Promise<void>;
  close(): Promise<void>;
}

const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;

/** Render settings as a SQL SETTINGS clause body; names are checked, values quoted. */
export function renderSettings(settings: Settings): string {
  return Object.entries(settings)
    .map(([k, v]) => {
      if (!SETTING_NAME.test(k)) throw new Error(`invalid setting name: ${k}`);
      if (typeof v === 'number' || typeof v === 'boolean') return `${k} = ${Number(v)}`;
      return `${k} = '${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    })
    .join(', ');
}

/** A ClickHouse error, with the engine's numeric code when known. */
export class WarehouseError extends Error {
  constructor(
    message: string,
    readonly clickhouseCode: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WarehouseError';
  }
}

/** ClickHouse error codes the service reacts to (their numbers live with the other codes). */
import { ClickHouseCode } from '../core/errors.ts';
export { ClickHouseCode };

/** The disk under the store is full: the engine could not reserve space, or a write hit ENOSPC. */
export function isStorageFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof WarehouseError && err.clickhouseCode === ClickHouseCode.NOT_ENOUGH_SPACE) return true;
  return /NOT_ENOUGH_SPACE|No space left on device|ENOSPC/.test(err.message);
}
