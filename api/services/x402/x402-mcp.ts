// x402 over MCP, as the x402 MCP transport (specs/transports-v2/mcp.md of the x402 repository,
// protocol version 2) says: a keyless tools/call without a payment is answered with a tool
// result `isError: true` whose structuredContent is the PaymentRequired (and whose
// content[0].text is it in the `x402/error` wrapper); the client retries with the payment in
// the request's `params._meta["x402/payment"]`; a paid call that answered is settled and its
// result carries the SettleResponse in `_meta["x402/payment-response"]`. The protocol's own
// messages (initialize, tools/list, resources) need no payment, so a client can connect first.
// Every payment of a POST is verified (and claimed) before any of its calls runs, so the POST
// runs as its first payer's, under the x402 plan (access-control.ts); each call is then checked
// against its own verdict as the door runs it (api/doors/mcp/mcp-server.ts).
import { PAYMENT_REQUIRED_STATUS } from '../../../core/errors.ts';
import type { FastifyRequest } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload } from '@x402/core/types';
import type { X402Door } from './x402-door.ts';
import type { PaidCall, Quote } from './x402-gateway.ts';
import { HeldTurns } from './payer-turns.ts';
import { PaymentRefusal, paymentId } from './refusals.ts';

/** Where an MCP client puts a tool call's x402 payment (the x402 MCP transport, version 2). */
export const X402_PAYMENT_META = 'x402/payment';

/** A tool call paid for by itself (x402's MCP transport): whose key it runs as. */
export interface PaidTool {
  readonly keyId: string;
}

/** The pay-per-call tool calls of a keyless POST: each admitted before it runs and settled once it answered. */
export interface ToolPayments {
  /** Before `tool` runs: the call's payer, or the tool result to answer instead (the payment required, or refused). */
  admit(tool: string, args: Record<string, unknown>, payment: unknown): Promise<PaidTool | CallToolResult>;
  /** Once it answered without error: `result` with its settlement, or the settlement's failure as the tool result. */
  settle(paid: PaidTool, result: CallToolResult): Promise<CallToolResult>;
}

/** How an MCP client retries, as the 402 tells it. */
const RETRY = `the payment in the tool call's params._meta["${X402_PAYMENT_META}"]`;

/** Where the settlement goes on a paid tool result. */
export const X402_PAYMENT_RESPONSE_META = 'x402/payment-response';

interface PaidToolCall extends PaidTool {
  paid: PaidCall;
  quote: Quote;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tools/call requests of a body that carry a payment, in order. */
function paidToolCalls(body: unknown): { name: string; args: Record<string, unknown>; payment: unknown }[] {
  return (Array.isArray(body) ? body : [body]).flatMap((m) => {
    if (!isObject(m) || m.method !== 'tools/call' || !isObject(m.params) || typeof m.params.name !== 'string') return [];
    const meta = m.params._meta;
    if (!isObject(meta) || meta[X402_PAYMENT_META] === undefined) return [];
    return [{ name: m.params.name, args: isObject(m.params.arguments) ? m.params.arguments : {}, payment: meta[X402_PAYMENT_META] }];
  });
}

/** A tool result that asks for payment, as the x402 MCP transport words it. */
function paymentRequired(body: object, message: string): CallToolResult {
  return {
    isError: true,
    structuredContent: body as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify({ 'x402/error': { code: PAYMENT_REQUIRED_STATUS, message, data: body } }) }],
  };
}

/** The pay-per-call tool calls of one keyless POST /mcp. */
export class McpPayments implements ToolPayments {
  /** Each payment's verdict by its id, with the quote it was verified against: a verified
   *  payment until a call takes it, then a replay. */
  private readonly verdicts = new Map<string, { verdict: PaidCall | PaymentRefusal; quote: Quote }>();
  /** The payers' turns this POST holds (payer-turns.ts), given back once it is answered. */
  readonly held = new HeldTurns();
  /** The first payer whose payment verified: the POST runs as theirs. */
  payer: string | undefined;

  private constructor(
    private readonly door: X402Door,
    private readonly req: FastifyRequest,
  ) {}

  /** Verify (and claim) every payment of the POST before anything runs. */
  static async admit(door: X402Door, req: FastifyRequest): Promise<McpPayments> {
    const payments = new McpPayments(door, req);
    for (const call of paidToolCalls(req.body)) {
      // Unreadable: refused when its call runs.
      const payload = (() => {
        try {
          return door.gateway.decode(call.payment);
        } catch {
          return undefined;
        }
      })();
      const id = payload === undefined ? undefined : paymentId(payload);
      if (payload === undefined || id === undefined || payments.verdicts.has(id)) continue;
      let quote: Quote;
      try {
        quote = await payments.quote(call.name, call.args);
      } catch {
        continue; // SQL that cannot be priced: its call answers why when it runs.
      }
      const verdict = await payments.verify(payload, quote);
      payments.verdicts.set(id, { verdict, quote });
      if (!(verdict instanceof PaymentRefusal)) payments.payer ??= verdict.payer;
    }
    return payments;
  }

  private async quote(tool: string, args: Record<string, unknown>): Promise<Quote> {
    return this.door.gateway.quote(await this.door.priceTool(this.req.ip, tool, args), `mcp://tool/${tool}`, `MCP tool ${tool}`);
  }

  /** The gateway's verdict: the payment claimed, or why not (anything else is thrown). */
  private async verify(payload: PaymentPayload, quote: Quote): Promise<PaidCall | PaymentRefusal> {
    try {
      return await this.door.gateway.verify(payload, quote, this.held);
    } catch (err) {
      if (err instanceof PaymentRefusal) return err;
      throw err;
    }
  }

  async admit(tool: string, args: Record<string, unknown>, payment: unknown): Promise<PaidTool | CallToolResult> {
    if (payment === undefined) return this.required(await this.quote(tool, args));
    let payload: PaymentPayload;
    try {
      payload = this.door.gateway.decode(payment);
    } catch (err) {
      return this.refused(await this.quote(tool, args), err as PaymentRefusal);
    }
    const id = paymentId(payload);
    let known = this.verdicts.get(id);
    if (known === undefined) {
      const quote = await this.quote(tool, args);
      known = { verdict: await this.verify(payload, quote), quote };
    }
    // Taken by this call: the same payment again in the POST is a replay.
    this.verdicts.set(id, { verdict: new PaymentRefusal('replayed_payment', 'this payment was already used for a call; sign a new one'), quote: known.quote });
    if (known.verdict instanceof PaymentRefusal) return this.refused(await this.quote(tool, args), known.verdict);
    return { keyId: `x402:${known.verdict.payer}`, paid: known.verdict, quote: known.quote } satisfies PaidToolCall;
  }

  private refused(quote: Quote, refusal: PaymentRefusal): Promise<CallToolResult> {
    this.req.log.info({ reason: refusal.code }, 'x402 MCP payment refused');
    return this.required(quote, refusal);
  }

  async settle(tool: PaidTool, result: CallToolResult): Promise<CallToolResult> {
    const { paid, quote } = tool as PaidToolCall;
    try {
      const settled = await this.door.gateway.settle(paid);
      this.door.settled(this.req, paid, settled.result.transaction);
      return { ...result, _meta: { ...result._meta, [X402_PAYMENT_RESPONSE_META]: settled.result } };
    } catch (err) {
      const refusal = err instanceof PaymentRefusal ? err : new PaymentRefusal('settlement_failed', String(err));
      this.req.log.warn({ reason: refusal.message }, 'x402 MCP settlement failed; the answer is withheld');
      const { body } = await this.door.gateway.required(quote, refusal, RETRY);
      const failure = { success: false, errorReason: refusal.code, transaction: '', network: paid.requirements.network };
      return paymentRequired({ ...body, [X402_PAYMENT_RESPONSE_META]: failure }, refusal.message);
    }
  }

  private async required(quote: Quote, refusal?: PaymentRefusal): Promise<CallToolResult> {
    const { body } = await this.door.gateway.required(quote, refusal, RETRY);
    return paymentRequired(body, body.error ?? 'payment required');
  }
}
