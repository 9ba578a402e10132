// Limits of the MCP door and users' own Prometheus (api/doors/mcp/, api/doors/user-metrics/; docs/mcp.md,
// docs/user-metrics.md).

const MiB = 1024 * 1024;

// ---- MCP door and users' own Prometheus (api/doors/mcp/, api/doors/user-metrics/; docs/mcp.md, docs/user-metrics.md) ----

/** POST /mcp: bytes of one request body (a tool call's arguments are small; run_sql carries
 *  at most SQL_MAX_LENGTH characters of query, JSON-escaped). */
export const MCP_BODY_LIMIT_BYTES = 1 * MiB;
/**
 * An MCP tool's answer is JSON text carried inside a JSON string: escaping doubles at most each
 * character (a quote or a backslash; the text has no raw control characters), so the door's
 * wire budget (ANSWER_BUDGET_BYTES.mcp) is this many times its content budget, and a batch
 * reserves content bytes, as JSON-RPC does: the same batch refuses the same members on both doors.
 */
export const MCP_CARRY_FACTOR = 2;
/** MCP get_usage: how far back the key's usage is summed, in hours. */
export const MCP_USAGE_HOURS = 24;
/** GET /v1/metrics: the windows of its gauges (label `window`), in seconds. */
export const USER_METRICS_WINDOWS = Object.freeze({ '5m': 5 * 60, '1h': 60 * 60 } as const);
/** GET /v1/metrics: instruction types one scrape may name (each adds a series per protocol). */
export const USER_METRICS_MAX_INSTRUCTION_TYPES = 20;
/** GET /v1/metrics: longest instruction type it takes (identifiers only), so that every request its
 *  schema calls valid fits the URI limit (HTTP_MAX_URI_BYTES) with the protocol list at its longest. */
export const USER_METRICS_INSTRUCTION_TYPE_MAX_CHARS = 64;

// ---- Hostile review of the MCP door (api/doors/mcp/mcp-server.ts) ----

/** POST /mcp: characters of an unknown tool name or resource URI quoted back in its error
 *  (a name may be as long as the body limit; the answer need not repeat it). */
export const MCP_ECHO_MAX_CHARS = 100;
