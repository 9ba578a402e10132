// POST /mcp: the MCP door, over the Streamable HTTP transport of the official SDK
// (@modelcontextprotocol/sdk, its web-standard transport, stateless, JSON answers), and
// GET /llms.txt, the description of every door for agents (no key). Authentication, the
// rate limit and the request budget are access control's hooks, as on every door: the key
// from x-api-key, Authorization: Bearer or ?api-key=; 401 without one, 403 for a key that is
// not active, 429 past the plan's rate. Each JSON-RPC request of a batch counts one more.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AppError, Errors } from '../../core/errors.ts';
import { MCP_BODY_LIMIT_BYTES } from '../../core/limits.ts';
import { llmsTxt } from './llms-txt.ts';
import { McpDoor } from './mcp-server.ts';
import type { ToolCaller, ToolDeps } from './mcp-tools.ts';

/** The implementation version the door announces (the API's version, as in its paths). */
const SERVER_VERSION = '1.0.0';

/** Headers the transport reads; the rest of the request stays with Fastify. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The MCP methods a usage label may name; any other method is counted as OTHER_METHOD. */
const USAGE_METHODS: ReadonlySet<string> = new Set(['initialize', 'ping', 'tools/list', 'resources/list', 'resources/read', 'resources/templates/list', 'prompts/list']);
const OTHER_METHOD = '(other)';

/** Usage labels of the requests of a body other than tool calls (those are labelled by their tool once answered). */
function protocolCalls(body: unknown): { label: string; error: boolean }[] {
  return (Array.isArray(body) ? body : [body])
    .filter((m): m is Record<string, unknown> => isObject(m) && typeof m.method === 'string' && Object.hasOwn(m, 'id') && m.method !== 'tools/call')
    .map((m) => ({ label: USAGE_METHODS.has(m.method as string) ? (m.method as string) : OTHER_METHOD, error: false }));
}

/** JSON-RPC requests (not notifications) in a body: each is one request against the rate limit. */
export const mcpRequestCount = (body: unknown): number =>
  Array.isArray(body) ? body.filter((m) => isObject(m) && typeof m.method === 'string' && Object.hasOwn(m, 'id')).length : 1;

/**
 * The request as the transport reads it: its method, URL and headers (the body is handed over
 * parsed). Only those parts, rather than a whole fetch Request, whose construction cost a
 * tenth of a tool call's CPU time; the SDK version is pinned (package.json), and
 * test/mcp.test.ts fails if the transport reads anything else.
 */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  const parts: Pick<Request, 'method' | 'url' | 'headers'> = { method: 'POST', url: `http://${req.hostname || 'localhost'}${req.url}`, headers };
  return parts as Request;
}

/** The messages the server sends through `transport` (its answers), as sent. */
function sentThrough(transport: WebStandardStreamableHTTPServerTransport): JSONRPCMessage[] {
  const sent: JSONRPCMessage[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  return sent;
}

/**
 * The JSON text of the transport's answer to a single request: the one answer its server sent
 * for that request's id, as the transport writes it (JSON.stringify of that message), so it need
 * not be read back out of the Response's body stream (a sixth of the SDK's time per call on
 * Node 20). Anything else (a batch, no answer or several) is read from the Response.
 */
function answerOf(body: unknown, sent: readonly JSONRPCMessage[]): string | undefined {
  if (!isObject(body) || !Object.hasOwn(body, 'id')) return undefined;
  const answers = sent.filter((m) => 'id' in m && m.id === body.id && ('result' in m || 'error' in m));
  return answers.length === 1 && sent.length === 1 ? JSON.stringify(answers[0]) : undefined;
}

export async function mcpRoutes(app: FastifyInstance, opts: ToolDeps): Promise<void> {
  const door = new McpDoor(opts, SERVER_VERSION);

  // A body that is not JSON gets the JSON-RPC parse error an MCP client reads (as the SDK
  // answers it); anything else (authentication, rate limits) goes on to the app's handler.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid JSON' } });
    }
    throw err;
  });

  app.get('/llms.txt', async (_req, reply) => reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=300').send(llmsTxt(door.tools.list)));

  app.post('/mcp', { bodyLimit: MCP_BODY_LIMIT_BYTES }, async (req, reply) => {
    const key = req.apiKey;
    // Access control authenticates before any handler; a bare app without it has no caller.
    if (key === null) throw new AppError(Errors.unauthorized, 'API key required');
    // An empty batch holds no request: JSON-RPC's Invalid Request (the SDK answers it 202, as a notification).
    if (Array.isArray(req.body) && req.body.length === 0) {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: an empty batch' } });
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
    // Stateless: a transport (and a server) per request, as the SDK requires. Neither is
    // closed: with JSON answers nothing of them outlives the answer (no stream, no timer),
    // and closing fails their pending requests with a new error each, a sixth of a call's time.
    // Usage by tool and method (access control records these once the answer is sent).
    const calls = protocolCalls(req.body);
    req.usageCalls = calls;
    const server = door.server(caller, {
      reference: req.id,
      onInternalError: (err) => req.log.error({ err, reference: req.id }, 'MCP call failed'),
      onToolCall: (label, error) => calls.push({ label, error }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    const sent = sentThrough(transport);
    const res = await transport.handleRequest(webRequest(req), { parsedBody: req.body });
    reply.code(res.status);
    res.headers.forEach((value, name) => {
      if (name !== 'content-length') reply.header(name, value);
    });
    const answer = res.status === 200 ? answerOf(req.body, sent) : undefined;
    if (answer !== undefined) return reply.send(answer);
    const text = await res.text();
    return reply.send(text === '' ? undefined : text);
  });
}
