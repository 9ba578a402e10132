// The door's MCP server: the official SDK's low-level Server (the tools' schemas are the
// catalog's JSON Schemas, not zod), one for the door, on the door's own stateless transport
// (mcp-transport.ts), which tells each handler whose request it runs: the key, plan and budget
// of that HTTP request. Tool failures are MCP tool errors (isError) with the message the other
// doors give (core/errors.ts); an unknown tool or resource is a protocol error, as the MCP
// specification asks, its message sent once, without the SDK's "MCP error <code>: " (its
// client adds that prefix itself: see DoorTransport).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type InitializeRequest,
  type InitializeResult,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { ANSWER_BUDGET_BYTES, formatBytes } from '../../../core/limits/answers.ts';
import { MCP_CARRY_FACTOR } from '../../../core/limits/mcp.ts';
import { AnswerBatch, setAsideBytes, type MemberOutcome } from '../../services/answers/answer-batch.ts';
import { inexactNumberWords } from '../../services/positional/raw-numbers.ts';
import { X402_PAYMENT_META, type PaidTool, type ToolPayments } from '../../services/x402/x402-mcp.ts';
import { resources, type Resource } from './mcp-resources.ts';
import { McpTools, TOOL_ANNOTATIONS, type Tool, type ToolCaller, type ToolDeps } from './mcp-tools.ts';
import { checked, echoed, isPlainObject, plainToolCall, ProtocolError, withoutTasks } from './mcp-messages.ts';
import { StatelessJsonTransport, type McpAnswer, type McpPost, type PlainRequest } from './mcp-transport.ts';

const INSTRUCTIONS =
  'Read-only analytics over instruction-level Solana DeFi transaction records. ' +
  'list_protocols names the protocols you may query and how fresh their data is; the get*/run_sql tools answer exactly what the ' +
  'JSON-RPC methods and POST /v1/query answer. Times are Unix seconds (blockTime {gte, lte}); fees are lamports. ' +
  'Prefer aggregate tools (getProtocolStats, getProtocolActivity, getTopProtocols) over listing records.';

export interface CallHooks {
  /** A reference the client can quote to find an internal failure in the logs (the request id). */
  reference: string;
  onInternalError(err: unknown): void;
  /** Told of each tool call once answered: its usage label (the tool's name, or one label for
   *  every unknown name, so invented names cannot fill the usage table) and whether it failed. */
  onToolCall(label: string, error: boolean): void;
  /** The first number of the tool call of this (client's) id that JSON.parse could not keep
   *  exactly, as sent (raw-numbers.ts, from the POST's text); undefined when there is none. */
  inexactNumber?(id: RequestId): string | undefined;
}

/**
 * The door's transport: the Server's error answers with the SDK's "MCP error <code>: " taken off
 * the message, for the errors the SDK's own code throws as McpError (the tools/call wrapper's
 * "Invalid tools/call request: …"); the client adds that prefix itself. A subclass rather than a
 * change to StatelessJsonTransport, which answers exactly as the SDK's transport does
 * (test/mcp-transport.test.ts).
 */
class DoorTransport<C> extends StatelessJsonTransport<C> {
  override send(message: JSONRPCMessage): Promise<void> {
    if ('error' in message) {
      const { code, message: text } = message.error;
      const prefix = `MCP error ${code}: `;
      if (typeof text === 'string' && text.startsWith(prefix)) message.error.message = text.slice(prefix.length);
    }
    return super.send(message);
  }
}

/** A paid tool call answered by its payment (asked for, or refused) instead of by its tool. */
class PaymentAnswer extends Error {
  constructor(readonly result: CallToolResult) {
    super('payment required');
  }
}

/** The usage label of a call of a tool this door does not have. */
export const UNKNOWN_TOOL = '(unknown tool)';

/** The error content of a tool call: an AppError's own words; anything else only a reference. */
function toolError(err: unknown, hooks: CallHooks): CallToolResult {
  const known = err instanceof AppError && err.kind !== Errors.internal;
  if (!known) hooks.onInternalError(err);
  const e = known ? err : new AppError(Errors.internal, `the server could not complete this call; reference ${hooks.reference}`);
  // In the order of the SDK's result schema (_meta, content, isError), as its parse leaves it,
  // so an answer given past the protocol (McpDoor.direct) reads the same to the byte.
  return { _meta: { 'txa/error': { code: e.kind.code, title: e.kind.title } }, content: [{ type: 'text', text: e.message }], isError: true };
}

/** A batch member's refusal (api/services/answers/answer-batch.ts) in the words JSON-RPC gives it. */
function refusal(reason: 'overBudget' | 'busy' | 'ended', answerBytes: number): AppError {
  if (reason === 'busy')
    return new AppError(
      Errors.rateLimited,
      "the answers of this plan's requests in flight fill its answer memory; retry shortly, or ask for fewer records per call",
    );
  if (reason === 'ended')
    return new AppError(
      Errors.queryTimeout,
      'the request ended (its client left, it ran past its time budget, or the call was cancelled) before this call ran',
    );
  return new AppError(
    Errors.responseTooLarge,
    `this answer would take the response past its ${formatBytes(answerBytes)} budget; ask for fewer records ` +
      '(a smaller limit, then page with paginationToken) or send fewer calls per batch',
  );
}

/** Characters JSON escapes as six (\u00XX): a text without them at most doubles when carried in a JSON string. */
const CONTROL = /[\u0000-\u001f]/;

/**
 * A tool's answer text as the batch counts it (AnswerBatchOptions.measure): its bytes, or half
 * what it becomes carried in the JSON string of its MCP result when that is more. JSON text
 * carried so is at most MCP_CARRY_FACTOR times itself; text with raw control characters (a CSV
 * answer of run_sql) up to six times, which its bytes alone would let past the door's budget.
 */
export function carriedMeasure(text: string): number {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (!CONTROL.test(text)) return bytes;
  return Math.max(bytes, Math.ceil((Buffer.byteLength(JSON.stringify(text), 'utf8') - 2) / MCP_CARRY_FACTOR));
}

/** The tool that runs client SQL in the sandbox. */
const SQL_TOOL = 'run_sql';

/**
 * The run_sql calls of one POST, one at a time. The sandbox runs one query of a key at a time
 * and lets two more wait (api/services/sql/concurrency-gate.ts); a batch's calls run four at a time, so
 * the fourth run_sql of a batch was refused as if the key had sent too many, by its own batch.
 */
class SqlTurns {
  private last: Promise<unknown> = Promise.resolve();

  next<T>(work: () => Promise<T>): Promise<T> {
    const mine = this.last.then(work, work);
    this.last = mine.catch(() => undefined);
    return mine;
  }
}

/** A tool call as the door runs it: its arguments, the client's id of it, an x402 payment sent with it. */
interface ToolCall {
  args: Record<string, unknown>;
  id?: RequestId;
  payment?: unknown;
}

/** What a handler knows of the HTTP request it answers. */
interface CallContext {
  caller: ToolCaller;
  hooks: CallHooks;
  /** Whether the POST is a batch of several requests (the direct path takes single ones only). */
  batch: boolean;
  /** Its calls' answers: reserved before they are built, a few at a time, as a JSON-RPC batch's. */
  answers: AnswerBatch;
  /** Its run_sql calls, one at a time (SqlTurns). */
  sql: SqlTurns;
  /** The door's answer budget for the whole POST. */
  answerBytes: number;
  /** A keyless caller's tool calls pay for themselves (x402 on); undefined: the key pays. */
  payments?: ToolPayments;
}

/**
 * The door's tools and resources and its one Server, built once. One Server serves every
 * request: the transport gives each request's JSON-RPC ids ids of its own, so requests that
 * reuse an id (every client's first is often 1) never meet in the Server's maps; the SDK's
 * Server is otherwise stateless for a stateless door (it keeps only the last initialize's client
 * capabilities, which this door never reads).
 */
export class McpDoor {
  readonly tools: McpTools;
  readonly resources: readonly Resource[];
  private readonly transport = new DoorTransport<CallContext>((context) => context.caller.keyId);
  private readonly connected: Promise<void>;
  /** Bytes of the lists the door answers without a call (setAside). */
  private listBytes: Record<'tools/list' | 'resources/list', number> | undefined;

  /** `direct`: answer the common tool call past the SDK's protocol (off only to compare the two). */
  constructor(
    deps: ToolDeps,
    private readonly version: string,
    direct = true,
  ) {
    this.tools = new McpTools(deps);
    this.resources = resources(deps);
    if (direct) this.transport.answerDirectly((request, context, cancelled) => this.direct(request, context, cancelled));
    const server = this.server();
    // Requests go straight to the protocol's request handling (mcp-transport.ts, handRequestsTo):
    // its type guards cost a cheap call a tenth of its throughput at 50 connections (bench/RESULTS.md).
    this.connected = server.connect(this.transport).then(() => void this.transport.handRequestsTo(server));
  }

  /**
   * The answer to one POST /mcp of `caller`, holding `requests` JSON-RPC requests. Once its
   * client is gone (its budget ended) no call of it starts, so it ends soon by itself.
   */
  async answer(post: McpPost, caller: ToolCaller, hooks: CallHooks, requests: number, payments?: ToolPayments): Promise<McpAnswer> {
    await this.connected;
    // The door's content budget: its answer budget (the request's, a bare app's the door's own)
    // less what carrying the answers as JSON strings may add (MCP_CARRY_FACTOR).
    const answerBytes = Math.floor((caller.budget?.answerBytes ?? ANSWER_BUDGET_BYTES.mcp) / MCP_CARRY_FACTOR);
    const answers = new AnswerBatch({
      budget: caller.budget,
      answerBytes,
      members: Math.max(1, requests),
      setAside: this.setAside(post.body),
      measure: carriedMeasure,
    });
    const context: CallContext = { caller, hooks, batch: requests > 1, answers, answerBytes, sql: new SqlTurns(), payments };
    return this.transport.handle({ ...post, body: withoutTasks(post.body) }, context);
  }

  /**
   * What the POST's answer holds besides its calls' texts, set aside before any call runs (as a
   * JSON-RPC batch sets aside its envelopes): room for each request's envelope or refusal with
   * its id, and the lists the door answers without running a call.
   */
  private setAside(body: unknown): number {
    const requests = (Array.isArray(body) ? body : [body]).filter(
      (m): m is Record<string, unknown> => isPlainObject(m) && typeof m.method === 'string' && Object.hasOwn(m, 'id'),
    );
    this.listBytes ??= {
      'tools/list': Buffer.byteLength(JSON.stringify(this.toolList())),
      'resources/list': Buffer.byteLength(JSON.stringify(this.resourceList())),
    };
    const lists = this.listBytes;
    const fixed = requests.reduce((n, m) => n + (m.method === 'tools/list' || m.method === 'resources/list' ? lists[m.method] : 0), 0);
    // An id is a string or a number (anything else is refused, answered with id null): never
    // JSON.stringify a client's id of another kind, which overflows the stack when nested deep.
    return setAsideBytes(
      requests.map((m) => (typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null)),
      fixed,
    );
  }

  /** The context of the request a handler runs for: a handler never runs outside one. */
  private context(requestId: string | number): CallContext {
    const context = this.transport.contextOf(requestId);
    if (context === undefined) throw new ProtocolError(ErrorCode.InternalError, 'no request in flight under this id');
    return context;
  }

  /**
   * A single plain tools/call of a tool this door has (most calls), answered here with the
   * result the Server's handler gives it, past the SDK's per-request machinery
   * (mcp-transport.ts, answerDirectly); anything else, undefined: the Server answers it.
   */
  private direct(request: PlainRequest, context: CallContext, cancelled: AbortSignal): Promise<CallToolResult> | undefined {
    if (request.method !== 'tools/call' || context.batch) return undefined;
    const call = plainToolCall(request);
    const tool = call === undefined ? undefined : this.tools.get(call.params.name);
    return tool === undefined ? undefined : this.callTool(tool, { args: call!.params.arguments ?? {}, id: request.id }, context, cancelled);
  }

  /**
   * A tool's answer, or its failure as a tool error; told to the request's hooks. It runs as a
   * member of the POST's batch (api/services/answers/answer-batch.ts): its answer bytes reserved before
   * it is built, its statements under a budget capped at them; `cancelled` stops it before it starts.
   */
  private async callTool(tool: Tool, call: ToolCall, context: CallContext, cancelled?: AbortSignal): Promise<CallToolResult> {
    const { hooks, answers, answerBytes, sql, payments } = context;
    const { args, payment } = call;
    // A number the parse rounded is refused before anything runs, in JSON-RPC's words (its params are these arguments).
    const inexact = call.id === undefined ? undefined : hooks.inexactNumber?.(call.id);
    if (inexact !== undefined) {
      hooks.onToolCall(tool.name, true);
      return toolError(new AppError(Errors.invalidParams, `arguments: ${inexactNumberWords(inexact)}`), hooks);
    }
    // Paid per call (x402): admitted once, as the member's first step, so members keep their
    // request order in the batch; nothing of the tool runs before its payment verified.
    let admission: Promise<PaidTool | CallToolResult> | undefined;
    let paid: PaidTool | undefined;
    const run = async (budget: Budget | null): Promise<string> => {
      if (payments !== undefined) {
        const admitted = await (admission ??= payments.admit(tool.name, args, payment));
        if ('content' in admitted) throw new PaymentAnswer(admitted);
        paid = admitted;
      }
      const caller: ToolCaller = paid === undefined ? context.caller : { ...context.caller, keyId: paid.keyId, plan: 'x402' };
      return tool.run(args, budget === caller.budget ? caller : { ...caller, budget });
    };
    const outcome: MemberOutcome = await answers.run((budget) => (tool.name === SQL_TOOL ? sql.next(() => run(budget)) : run(budget)), cancelled);
    let result: CallToolResult;
    if ('text' in outcome) result = { content: [{ type: 'text', text: outcome.text }] };
    else if ('refused' in outcome) result = toolError(refusal(outcome.refused, answerBytes), hooks);
    else if (outcome.thrown instanceof PaymentAnswer) result = outcome.thrown.result;
    else {
      const err = outcome.thrown;
      result = toolError(err instanceof AppError && err.kind === Errors.responseTooLarge ? refusal('overBudget', answerBytes) : err, hooks);
    }
    // Settled only when it answered: a failed call is not charged.
    if (paid !== undefined && payments !== undefined && result.isError !== true) result = await payments.settle(paid, result);
    hooks.onToolCall(tool.name, result.isError === true);
    return result;
  }

  private toolList() {
    return {
      tools: this.tools.list.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        annotations: TOOL_ANNOTATIONS,
      })),
    };
  }

  private resourceList() {
    return { resources: this.resources.map(({ uri, name, title, description, mimeType }) => ({ uri, name, title, description, mimeType })) };
  }

  private server(): Server {
    const server = new Server(
      { name: 'solana-tx-analytics', title: 'Solana DeFi transaction analytics', version: this.version },
      {
        capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
        instructions: INSTRUCTIONS,
        jsonSchemaValidator: new AjvJsonSchemaValidator(),
      },
    );
    // The SDK's own initialize handler, registered with the SDK's parse: the same check first.
    const sdk = server as unknown as { _oninitialize(request: InitializeRequest): Promise<InitializeResult> };
    server.setRequestHandler(InitializeRequestSchema.pick({ method: true }).loose(), (raw) => sdk._oninitialize(checked(InitializeRequestSchema, raw)));
    server.setRequestHandler(ListToolsRequestSchema.pick({ method: true }).loose(), (raw) => {
      checked(ListToolsRequestSchema, raw);
      return this.toolList();
    });
    server.setRequestHandler(CallToolRequestSchema.pick({ method: true }).loose(), async (raw, extra) => {
      const context = this.context(extra.requestId);
      const request = plainToolCall(raw) ?? checked(CallToolRequestSchema, raw);
      const tool = this.tools.get(request.params.name);
      if (tool === undefined) {
        context.hooks.onToolCall(UNKNOWN_TOOL, true);
        throw new ProtocolError(ErrorCode.InvalidParams, `unknown tool "${echoed(request.params.name)}"; tools/list lists the tools`);
      }
      const call = { args: request.params.arguments ?? {}, id: this.transport.originalOf(extra.requestId), payment: request.params._meta?.[X402_PAYMENT_META] };
      return this.callTool(tool, call, context, extra.signal);
    });
    server.setRequestHandler(ListResourcesRequestSchema.pick({ method: true }).loose(), (raw) => {
      checked(ListResourcesRequestSchema, raw);
      return this.resourceList();
    });
    // Resources are declared, so their templates are asked for too (the Inspector lists both):
    // the door's resources are fixed URIs, none a template.
    server.setRequestHandler(ListResourceTemplatesRequestSchema.pick({ method: true }).loose(), (raw) => {
      checked(ListResourceTemplatesRequestSchema, raw);
      return { resourceTemplates: [] };
    });
    server.setRequestHandler(ReadResourceRequestSchema.pick({ method: true }).loose(), async (raw, extra) => {
      const { caller, hooks, answers, answerBytes } = this.context(extra.requestId);
      const request = checked(ReadResourceRequestSchema, raw);
      const resource = this.resources.find((r) => r.uri === request.params.uri);
      if (resource === undefined)
        throw new ProtocolError(ErrorCode.InvalidParams, `unknown resource "${echoed(request.params.uri)}"; resources/list lists the resources`);
      // A member of the POST's batch, as a tool call is: its bytes reserved before it is read.
      const outcome = await answers.run((budget) => resource.read(budget === caller.budget ? caller : { ...caller, budget }), extra.signal);
      if ('text' in outcome) return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: outcome.text }] };
      const err = 'refused' in outcome ? refusal(outcome.refused, answerBytes) : outcome.thrown;
      // The protocol error carries its message to the client: never an internal one.
      const e = toolError(err, hooks).content[0];
      throw new ProtocolError(err instanceof AppError ? ErrorCode.InvalidRequest : ErrorCode.InternalError, e?.type === 'text' ? e.text : 'failed');
    });
    return server;
  }
}
