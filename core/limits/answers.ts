// Limits of answers, per door: byte budgets, wall time, chunked writing, serving speed
// (core/budget.ts holds the one request budget built from them).

import { GRAPHQL_RESPONSE_BUDGET_BYTES, GRAPHQL_TIMEOUT_MS } from './graphql.ts';
import { MCP_CARRY_FACTOR } from './mcp.ts';
import { SQL_TIMEOUT_SECONDS } from './sql.ts';

const MiB = 1024 * 1024;

/**
 * Byte budget of one JSON-RPC response (a single answer or a whole batch), UTF-8 as sent.
 * Results are kept in request order until the budget is used up; calls past it are
 * answered with an error instead of their result.
 */
export const RPC_RESPONSE_BUDGET_BYTES = 32 * MiB;

/** Byte budget of one REST response; a larger answer is a 400 asking for a smaller page. */
export const REST_RESPONSE_BUDGET_BYTES = 16 * MiB;

/** Bytes of a string as UTF-8, skipping the count when it cannot matter (each UTF-16 unit is at most 3 bytes). */
export function fitsBudget(text: string, budget: number): boolean {
  return text.length * 3 <= budget || Buffer.byteLength(text, 'utf8') <= budget;
}

/** "32 MiB" for a byte count that is a whole number of MiB, else "N bytes". */
export function formatBytes(bytes: number): string {
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/**
 * Bytes one SQL answer may carry, JSON body or CSV stream (the engine's max_result_bytes,
 * and the JSON text checked before it is parsed). Past it: 400 naming the budget.
 */
export const SQL_RESPONSE_BUDGET_BYTES = 32 * MiB;
/** Bytes serialised between two turns of the event loop when an answer is written out. */
export const ANSWER_CHUNK_BYTES = 64 * 1024;
// ---- One request budget (core/budget.ts): what differs by door ------------------------------
// Plan figures (rows read, join rows, memory) are in core/plans.ts; these are per door.
/** The doors a request can come through; each has its answer budget and wall time. */
export const DOORS = ['rpc', 'rest', 'sql', 'graphql', 'mcp', 'stream', 'export', 'download', 'operator'] as const;
export type Door = (typeof DOORS)[number];

/**
 * Bytes one answer may carry, per door. Streams (one event at a time, bounded by
 * STREAM_MAX_QUEUED_EVENTS), export jobs (files, bounded by their quotas), file downloads
 * (the file as written) and operator calls have no answer budget of this kind.
 */
export const ANSWER_BUDGET_BYTES: Readonly<Record<Door, number>> = Object.freeze({
  rpc: RPC_RESPONSE_BUDGET_BYTES,
  rest: REST_RESPONSE_BUDGET_BYTES,
  sql: SQL_RESPONSE_BUDGET_BYTES,
  graphql: GRAPHQL_RESPONSE_BUDGET_BYTES,
  // An MCP tool call answers what its JSON-RPC method (or run_sql, what /v1/query) answers,
  // carried as a JSON string: its content has JSON-RPC's budget, its bytes on the wire up to
  // MCP_CARRY_FACTOR times that.
  mcp: MCP_CARRY_FACTOR * Math.max(RPC_RESPONSE_BUDGET_BYTES, SQL_RESPONSE_BUDGET_BYTES),
  stream: Infinity,
  export: Infinity,
  download: Infinity,
  operator: Infinity,
});

/**
 * Wall time of one whole request, per door (ms): no statement of the request starts or runs
 * past it (each also stops at SQL_TIMEOUT_SECONDS). SQL allows a wait for a session
 * (up to the time-out) before its run; a JSON-RPC batch runs up to RPC_MAX_BATCH calls.
 * Streams and export jobs are long-lived: their statements are bounded one by one.
 */
export const DOOR_WALL_MS: Readonly<Record<Door, number>> = Object.freeze({
  rpc: 60_000,
  rest: 30_000,
  sql: 2 * SQL_TIMEOUT_SECONDS * 1000,
  graphql: GRAPHQL_TIMEOUT_MS,
  mcp: 2 * SQL_TIMEOUT_SECONDS * 1000,
  stream: Infinity,
  export: Infinity,
  download: Infinity,
  operator: Infinity,
});

// ---- Compiled questions kept with their cache keys (api/analytics/analytics.ts) ----
/** Questions whose compiled statement and result-cache key are kept, so that a cached answer
 *  compiles nothing. Compiling depends only on the question (not on data), so entries never go
 *  stale; the bound only stops callers choosing keys (every distinct range is one) from filling
 *  memory. Past it the memo is emptied and fills again. */
export const COMPILED_QUESTIONS_KEPT = 2_000;
