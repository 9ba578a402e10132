// The reading of a POST /mcp's messages before the SDK's Server sees them: params checked
// with a client's error (not the SDK's -32603), the common tools/call taken as it is, the
// `task` augmentation the door does not declare left out, a client's names quoted back short.
import { ErrorCode, type CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { MCP_ECHO_MAX_CHARS } from '../../../core/limits/mcp.ts';

/**
 * A JSON-RPC error a handler throws: the SDK's protocol sends its `code` and `message` as they
 * are. Not the SDK's McpError, whose message is already "MCP error <code>: <message>": the
 * SDK's client makes an McpError of what it receives, so it read "MCP error -32602: MCP error
 * -32602: unknown tool …".
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A client's name as quoted back: at most MCP_ECHO_MAX_CHARS characters. */
export const echoed = (name: string): string => (name.length > MCP_ECHO_MAX_CHARS ? `${name.slice(0, MCP_ECHO_MAX_CHARS)}…` : name);

/** The issues of a failed parse, as zod gives them. */
interface Parsed<T> {
  success: boolean;
  data?: T;
  error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] };
}

/**
 * `request` as `schema` reads it, or -32602 naming the first bad field. The SDK's own parse,
 * run before a handler, answers a client's malformed params (arguments that are not an object,
 * a uri that is not a string) with -32603, an internal error, and the schema's whole dump; so
 * handlers are registered under a schema of only their method and check the params here.
 */
export function checked<T>(schema: { safeParse(v: unknown): Parsed<T> }, request: unknown): T {
  const r = schema.safeParse(request);
  if (r.success) return r.data as T;
  const issue = r.error?.issues[0];
  throw new ProtocolError(ErrorCode.InvalidParams, `invalid params: ${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'malformed'}`);
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The common tools/call, `{ name, arguments? }` and nothing else, taken as it is: the shape
 * CallToolRequestSchema accepts unchanged (a string name, an object of arguments). Anything
 * else (other keys, _meta, wrong types) goes through the schema's parse and its error.
 */
export function plainToolCall(raw: unknown): CallToolRequest | undefined {
  if (!isPlainObject(raw) || !isPlainObject(raw.params)) return undefined;
  const params = raw.params;
  for (const k in params) if (k !== 'name' && k !== 'arguments') return undefined;
  if (typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  return raw as unknown as CallToolRequest;
}

/**
 * The body with `task` left out of every request's params. The door declares no `tasks`
 * capability, and MCP (2025-11-25, "Tasks": task support and handling) says a receiver that
 * does not declare it for a request type MUST process such requests normally, ignoring the
 * task augmentation; the SDK's Server refuses them instead, with -32603 (an internal error).
 */
export function withoutTasks(body: unknown): unknown {
  const strip = (m: unknown): unknown => {
    if (!isPlainObject(m) || !isPlainObject(m.params) || !Object.hasOwn(m.params, 'task')) return m;
    const { task: _ignored, ...params } = m.params;
    return { ...m, params };
  };
  return Array.isArray(body) ? body.map(strip) : strip(body);
}
