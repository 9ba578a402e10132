// Subscription plans (SPEC "Subscription plan") and everything that differs by plan, in one
// table per concern so a new plan is one line in each.
export const PLANS = ['free', 'x402', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const isPlan = (v: unknown): v is Plan => typeof v === 'string' && (PLANS as readonly string[]).includes(v);

/** Requests per minute per plan (SPEC.md "Limits"). */
export const PLAN_LIMITS: Readonly<Record<Plan, number>> = Object.freeze({ free: 100, x402: 500, enterprise: 2000 });

/**
 * JSON-RPC and REST requests one key may have in flight at once, per API process (past it:
 * 429). The engine does not answer faster for being asked more at once, so a key's
 * concurrent calls only queue ahead of everyone else's: 60 heavy calls from one free key
 * stalled other keys' point lookups for 6-17 s. 4 covers a dashboard drawing its panels at
 * once (browsers open at most 6 connections per host); paid plans get more, growing slower
 * than their rate limits because engine capacity does not grow with concurrency. SQL has
 * its own, stricter gate (SQL_SESSIONS, SQL_QUEUE_PER_KEY).
 */
export const PLAN_CONCURRENCY: Readonly<Record<Plan, number>> = Object.freeze({ free: 4, x402: 8, enterprise: 16 });

/**
 * Live GraphQL streams (/graphql/stream) one key may hold open at once, per API process
 * (past it: 429). A stream costs no engine work of its own (one read per committed write
 * serves every stream), but each holds a connection, a buffer and a heartbeat timer; a
 * dashboard needs a few, a back-end fanning data out to its own users holds one per feed.
 */
export const PLAN_STREAMS: Readonly<Record<Plan, number>> = Object.freeze({ free: 2, x402: 10, enterprise: 50 });

/**
 * Rows one query may plan to read, per plan (the engine's EXPLAIN ESTIMATE; a cross join
 * counts as the product of its sides). The same budget guards client SQL and GraphQL.
 */
export const PLAN_QUERY_BUDGET: Readonly<Record<Plan, number>> = Object.freeze({
  free: 100_000_000,
  x402: 1_000_000_000,
  enterprise: 10_000_000_000,
});

// ---- Fair sharing of heavy work (SQL sessions, export workers) ----------------------------

/**
 * The share of the client-SQL engine sessions (and of the export workers) that the running
 * work of ALL keys of one plan may hold together: floor(slots x share), at least one. With
 * the default 2 sessions, free keys together hold at most one, so however heavy their
 * queries, another plan's key always finds a session (an enterprise `SELECT 1` answers at
 * once); x402 keys hold at most one of 2 (two of 3), enterprise keys may use all.
 */
export const PLAN_HEAVY_SHARE: Readonly<Record<Plan, number>> = Object.freeze({ free: 0.5, x402: 0.75, enterprise: 1 });

/** Who gets a freed session or worker first: the waiter of the highest plan, oldest first within it. */
export const PLAN_PRIORITY: Readonly<Record<Plan, number>> = Object.freeze({ free: 0, x402: 1, enterprise: 2 });

/**
 * Statements of one plan (all its keys together) that may wait in or run on the serving
 * engine session at once; the rest wait in the API process, where another plan's statement
 * passes them (warehouse/plan-lanes.ts). The session runs one statement at a time, so this
 * bounds how many statements of other plans an enterprise read (or /health) can queue
 * behind: one free one, two x402 ones. Work outside any key (ingest, start-up, operators)
 * is not held back.
 */
export const PLAN_SESSION_STATEMENTS: Readonly<Record<Plan, number>> = Object.freeze({ free: 1, x402: 2, enterprise: 8 });

/** Slots of `total` one plan's work may hold together (PLAN_HEAVY_SHARE). */
export function planShareOf(plan: Plan, total: number): number {
  return Math.max(1, Math.floor(total * PLAN_HEAVY_SHARE[plan]));
}

// ---- The request budget's plan figures (core/budget.ts) -----------------------------------

/**
 * Rows one join may hold in memory (the engine's max_rows_in_join) per plan. A join's output
 * is priced before it runs by the cost check against PLAN_QUERY_BUDGET.
 */
export const PLAN_JOIN_ROWS: Readonly<Record<Plan, number>> = Object.freeze({ free: 10_000_000, x402: 100_000_000, enterprise: 1_000_000_000 });

/**
 * Engine memory one statement may use, per plan (max_memory_usage; the SQL sandbox's own
 * SQL_MAX_MEMORY_BYTES applies too, the smaller wins). Enough for any answer the doors
 * build from the hourly views; the bound is for hostile client SQL and wide listings.
 */
export const PLAN_MEMORY_BYTES: Readonly<Record<Plan, number>> = Object.freeze({ free: 1024 ** 3, x402: 2 * 1024 ** 3, enterprise: 4 * 1024 ** 3 });

// ---- Export quotas (docs/exports.md "Limits", "Quotas" and "Fair sharing") ---------------
// Defaults of the per-plan export caps; EXPORT_MAX_ROWS_* and EXPORT_MAX_JOBS_* override
// the first two (core/config/load-config.ts), the byte quotas are read from here.

/** Rows one export job may write. */
export const PLAN_EXPORT_MAX_ROWS: Readonly<Record<Plan, number>> = Object.freeze({ free: 1_000_000, x402: 20_000_000, enterprise: 500_000_000 });

/** Export jobs one key may have QUEUED or RUNNING at once (past it: 429). */
export const PLAN_EXPORT_MAX_JOBS: Readonly<Record<Plan, number>> = Object.freeze({ free: 1, x402: 2, enterprise: 4 });

const GiB = 1024 ** 3;

/**
 * Bytes one export job's files may hold. Rows need not come from a table (a SQL export of
 * `repeat('x', 100000)` costs no read budget), so output is budgeted in bytes as well as rows:
 * the engine counts a SQL export's bytes before writing, a filter export's are estimated
 * before its first chunk and checked before every chunk.
 */
export const PLAN_EXPORT_JOB_BYTES: Readonly<Record<Plan, number>> = Object.freeze({ free: 1 * GiB, x402: 16 * GiB, enterprise: 128 * GiB });

/** Bytes the unexpired export files of one key may hold together (a new job waits for old ones to expire). */
export const PLAN_EXPORT_KEY_BYTES: Readonly<Record<Plan, number>> = Object.freeze({ free: 2 * GiB, x402: 32 * GiB, enterprise: 256 * GiB });

/**
 * Share of the export disk budget (EXPORT_DISK_BUDGET_BYTES) the files of all keys of a plan
 * may hold together: however many free keys there are, they cannot fill the disk paid
 * exports need. 1 for enterprise: its keys are bounded by the budget itself.
 */
export const PLAN_EXPORT_DISK_SHARE: Readonly<Record<Plan, number>> = Object.freeze({ free: 0.1, x402: 0.5, enterprise: 1 });

/**
 * Export workers kept for paid plans: free jobs may use at most EXPORT_WORKERS minus this
 * many (and at least one), so a free key's heavy export never makes a paid key wait for a
 * worker. With a single worker there is nothing to keep; preemption at chunk boundaries
 * still bounds the wait to one statement.
 */
export const EXPORT_WORKERS_RESERVED_FOR_PAID = 1;

/**
 * Bytes of answers that the requests of one plan (all its keys together) may hold in the API
 * process at once, while they are assembled and sent (the budget's memory figure for what
 * the engine hands back). Three free keys with four 32 MiB JSON-RPC batches each in flight
 * would otherwise hold about 400 MiB of answer text; past it a call is answered "busy".
 * All plans together (448 MiB) stay well inside the process's V8 heap limit (1 GiB by
 * default, NODE_HEAP_MB in package.json's start script), with room for the caches.
 */
export const PLAN_ANSWER_MEMORY_BYTES: Readonly<Record<Plan, number>> = Object.freeze({
  free: 64 * 1024 ** 2,
  x402: 128 * 1024 ** 2,
  enterprise: 256 * 1024 ** 2,
});

// ---- The x402 plan's prices (docs/x402.md "Prices") ---------------------------------------

/**
 * What a keyless call paid over HTTP 402 costs, from the cost units the cost model prices it
 * at before it runs (the engine's EXPLAIN ESTIMATE of the rows read plus the base cost per
 * statement, as every plan's budget counts them). Amounts are in the token's atomic units:
 * USDC has 6 decimals, so 1_000 is $0.001. X402_PRICE_PER_MILLION_UNITS and
 * X402_PRICE_FLOOR override the two prices; the unit figures are the cost model's own.
 */
export const X402_PRICES = Object.freeze({
  /** Atomic units per million cost units: $0.01 for a question that reads a million rows. */
  perMillionUnits: 10_000,
  /** The least any call costs: $0.001, whatever it reads (an answer always costs a request). */
  floor: 1_000,
  /** Cost units of one call of a door that prices no statement up front (JSON-RPC, REST, MCP,
   *  GraphQL fields): the cost model's base cost of one statement (ANSWER_COST_PER_STATEMENT). */
  unitsPerCall: 1_000,
  /** How long a 402's requirements stay payable (the requirements' maxTimeoutSeconds). */
  validitySeconds: 60,
  /** 402 answers and payment attempts one client address may get per minute (X402_REQUIREMENTS_PER_MINUTE). */
  requirementsPerMinute: 120,
  /** Payments remembered as spent, per process: a replay inside this many is refused in memory. */
  spentPaymentsKept: 100_000,
  /** How long a spent payment is remembered: past a Solana blockhash's life (~80 s) a replay fails on chain anyway. */
  spentPaymentMs: 10 * 60_000,
  /**
   * What a payment's transaction may make our in-process facilitator's fee payer spend (the
   * payer writes it, we pay it). The official client asks 20,000 compute units at 1
   * micro-lamport and two signatures (payer, fee payer): 10,000 lamports. Unbounded, a payer
   * could ask 1.4 M units at the library's ceiling of 5 M micro-lamports (0.007 SOL) or add
   * signers at 5,000 lamports each. At most 50,000 units x 100,000 micro-lamports = 5,000
   * lamports of priority fee, and two signatures.
   */
  /** run_sql calls one keyless MCP batch may hold: each is priced by an engine estimate before any payment. */
  sqlPerPaidCall: 10,
  facilitatorFees: Object.freeze({ maxComputeUnits: 50_000, maxPriorityFeeMicroLamports: 100_000, maxRequiredSignatures: 2 }),
});

/** Prices of the x402 plan as configured (core/config: X402_PRICE_PER_MILLION_UNITS, X402_PRICE_FLOOR). */
export interface X402PriceTable {
  perMillionUnits: number;
  floor: number;
}

/** The price in atomic units of a call the cost model prices at `units`: proportional, never under the floor. */
export function x402Price(units: number, table: X402PriceTable): bigint {
  const safe = Number.isFinite(units) && units > 0 ? units : 0;
  const proportional = BigInt(Math.ceil((safe * table.perMillionUnits) / 1_000_000));
  const floor = BigInt(table.floor);
  return proportional > floor ? proportional : floor;
}
