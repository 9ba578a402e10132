// POST /mcp: the MCP door, the official SDK's Server on the door's own stateless Streamable
// HTTP transport (JSON answers; mcp-transport.ts says why it is ours), and
// GET /llms.txt, the description of every door for agents (no key). Authentication, the
// rate limit and the request budget are access control's hooks, as on every door: the key
// from x-api-key, Authorization: Bearer or ?api-key=; 401 without one, 403 for a key that is
// not active, 429 past the plan's rate. Each JSON-RPC request of a batch counts one more.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { AppError, Errors } from '../../../core/errors.ts';
import { ForbiddenJsonKey, jsonBodyParser } from '../../services/access/json-bodies.ts';
import { inexactNestedNumbers, MAYBE_INEXACT } from '../../services/positional/raw-numbers.ts';
import { MCP_BODY_LIMIT_BYTES } from '../../../core/limits/mcp.ts';
import { llmsTxt } from './llms-txt.ts';
import { McpDoor, type CallHooks } from './mcp-server.ts';
import type { ToolCaller, ToolDeps } from './mcp-tools.ts';
import { keyed, open } from '../../services/access/route-policy.ts';

/** The implementation version the door announces (the API's version, as in its paths). */
const SERVER_VERSION = '1.0.0';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The MCP methods a usage label may name; any other method is counted as OTHER_METHOD. */
const USAGE_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
]);
const OTHER_METHOD = '(other)';

/** Usage labels of the requests of a body other than tool calls (those are labelled by their tool once answered). */
function protocolCalls(body: unknown): { label: string; error: boolean }[] {
  // The usual body, one tool call: nothing to label yet.
  if (isObject(body) && body.method === 'tools/call') return [];
  return (Array.isArray(body) ? body : [body])
    .filter((m): m is Record<string, unknown> => isObject(m) && typeof m.method === 'string' && Object.hasOwn(m, 'id') && m.method !== 'tools/call')
    .map((m) => ({ label: USAGE_METHODS.has(m.method as string) ? (m.method as string) : OTHER_METHOD, error: false }));
}

/** The usage label of a tool call refused before a tool was looked up (its params malformed). */
export const INVALID_TOOL_CALL = '(invalid tool call)';

/** Tool-call requests (not notifications) in a body. */
const toolCallCount = (body: unknown): number =>
  (Array.isArray(body) ? body : [body]).filter((m) => isObject(m) && m.method === 'tools/call' && Object.hasOwn(m, 'id')).length;

/** A batch the transport refuses whole, before anything runs (more than MAX_BATCH_SIZE messages). */
const refusedWhole = (body: unknown): boolean => Array.isArray(body) && body.length > MAX_BATCH_SIZE;

/** JSON-RPC requests (not notifications) in a body: each is one request against the rate limit.
 *  A batch refused whole runs nothing and is one request, as on JSON-RPC (rpcCallCount). */
export const mcpRequestCount = (body: unknown): number =>
  Array.isArray(body) && !refusedWhole(body) ? body.filter((m) => isObject(m) && typeof m.method === 'string' && Object.hasOwn(m, 'id')).length : 1;

/** HTTP whitespace at either end, which a fetch Headers strips from a value (String.trim strips more). */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** A header as the SDK's transport read it from a fetch Headers: one value, edges stripped, or none. */
function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  if (typeof v !== 'string') return undefined;
  // Most values have no edge whitespace: no regular expression for those.
  return v.length > 0 && (v.charCodeAt(0) <= 0x20 || v.charCodeAt(v.length - 1) <= 0x20) ? v.replace(EDGE_WHITESPACE, '') : v;
}

/** A request's hooks as one object: methods, not closures made per request (each also named under tsx). */
class RequestHooks implements CallHooks {
  readonly reference: string;
  constructor(
    private readonly req: FastifyRequest,
    private readonly calls: { label: string; error: boolean }[],
  ) {
    this.reference = req.id;
  }

  inexactNumber(id: RequestId): string | undefined {
    const tokens = this.req.mcpNumbers;
    if (tokens === null) return undefined;
    // By message: a tool call of this id whose members hold a number the parse rounded (a repeated id: each such call).
    const messages = Array.isArray(this.req.body) ? this.req.body : [this.req.body];
    return messages.flatMap((m, i) => (isObject(m) && m.id === id && m.method === 'tools/call' && tokens[i] !== undefined ? [tokens[i]] : []))[0];
  }

  onInternalError(err: unknown): void {
    this.req.log.error({ err, reference: this.reference }, 'MCP call failed');
  }

  onToolCall(label: string, error: boolean): void {
    this.calls.push({ label, error });
  }
}

export async function mcpRoutes(app: FastifyInstance, opts: ToolDeps): Promise<void> {
  const door = new McpDoor(opts, SERVER_VERSION);

  // A body that is not JSON gets the JSON-RPC parse error an MCP client reads (as the SDK
  // answers it), one holding a refused key an Invalid Request naming it; anything else (authentication, rate limits) goes on to the app's handler.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply
        .code(400)
        .send({ jsonrpc: '2.0', id: null, error: { code: Errors.parseError.rpc, message: 'Parse error: the request body is not valid JSON' } });
    }
    // Valid JSON holding "__proto__" (in a tool's arguments, say): no parse error, a refused request.
    if (err instanceof ForbiddenJsonKey)
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: Errors.invalidRequest.rpc, message: `Invalid Request: ${err.message}` } });
    throw err;
  });

  // The body's text is scanned for numbers JSON.parse rounds, as JSON-RPC's is (one scanner,
  // raw-numbers.ts), only when a fraction, an exponent or 16 digits make one possible.
  app.decorateRequest('mcpNumbers', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    jsonBodyParser(app, (req, text) => {
      if (MAYBE_INEXACT.test(text)) req.mcpNumbers = inexactNestedNumbers(text);
    }),
  );

  app.get('/llms.txt', { config: open() }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=300').send(llmsTxt(door.tools.list)),
  );

  app.post('/mcp', { bodyLimit: MCP_BODY_LIMIT_BYTES, config: keyed('mcp', 'mcp') }, async (req, reply) => {
    // A keyless POST with x402 on: its tool calls pay for themselves (api/services/x402/x402-mcp.ts);
    // it runs as its first payer's, or as no one's (the address's) when none paid.
    const payments = req.x402 !== null && typeof req.x402 === 'object' && 'admit' in req.x402 ? req.x402 : undefined;
    const key = req.apiKey ?? (payments === undefined ? null : { id: `x402:${req.ip}`, plan: 'x402' as const });
    // Access control authenticates before any handler; a bare app without it has no caller.
    if (key === null) throw new AppError(Errors.unauthorized, 'API key required');
    // An empty batch holds no request: JSON-RPC's Invalid Request (the SDK answers it 202, as a notification).
    if (Array.isArray(req.body) && req.body.length === 0) {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: Errors.invalidRequest.rpc, message: 'Invalid Request: an empty batch' } });
    }
    const requests = mcpRequestCount(req.body);
    if (requests > 1) await req.consumeRateLimit(requests - 1);
    const rl = req.rateLimit;
    const caller: ToolCaller = {
      keyId: key.id,
      plan: key.plan,
      budget: req.budget,
      rateLimit: rl === null ? null : { limit: rl.limit, remaining: rl.remaining, resetAt: rl.resetAt },
    };
    // Usage by tool and method (access control records these once the answer is sent); a
    // batch refused whole is one request, recorded as the POST.
    const whole = refusedWhole(req.body);
    const calls = whole ? [] : protocolCalls(req.body);
    const protocolCount = calls.length;
    if (!whole) {
      req.usageCalls = calls;
      req.usageExpected = protocolCount + toolCallCount(req.body);
    }
    const post = {
      accept: header(req, 'accept'),
      contentType: header(req, 'content-type'),
      protocolVersion: header(req, 'mcp-protocol-version'),
      body: req.body,
    };
    const answer = await door.answer(post, caller, new RequestHooks(req, calls), requests, payments);
    // A tool call the SDK refused before any handler ran (params of the wrong shape) told no
    // one: it still counted against the rate limit, so it is recorded, as an invalid call.
    for (let unheard = whole ? 0 : toolCallCount(req.body) - (calls.length - protocolCount); unheard > 0; unheard--)
      calls.push({ label: INVALID_TOOL_CALL, error: true });
    // Answered by its deadline meanwhile (request-budget.ts): one reply per request.
    if (reply.sent) return reply;
    reply.code(answer.status);
    for (const name in answer.headers) reply.header(name, answer.headers[name]);
    return reply.send(answer.body);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Per message of an MCP POST (its index in a batch), the first number of its members JSON.parse rounded; null when none can be. */
    mcpNumbers: (string | undefined)[] | null;
  }
}
