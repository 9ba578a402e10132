// Our thin Fastify adapter over the x402 gateway (x402-gateway.ts). Access control calls it:
//   onRequest   a keyless request to a keyed door, with x402 on: counted against its
//               address's 402 budget (X402_REQUIREMENTS_PER_MINUTE; past it 429), then
//               left pending instead of refused 401;
//   preHandler  the body is parsed: the call is priced (x402-pricing.ts); without a payment,
//               or with one refused, 402 with the requirements (PAYMENT-REQUIRED header and
//               body) and the reason; a payment that verifies makes the request the payer's,
//               under the x402 plan (access-control.ts grants its budget and limits);
//   onSend      (an edge step) a paid answer that succeeded, or that the caller's request made
//               fail after its engine work ran (settles), is settled, once, and carries the
//               PAYMENT-RESPONSE header; any other failure is not settled: the caller is not
//               charged, and the payment stays spent.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HOST_HEADER_MAX_CHARS } from '../../../core/limits/http.ts';
import type { Readable } from 'node:stream';
import type { EdgeStep } from '../answers/answer-edge.ts';
import type { RoutePolicy } from '../access/route-policy.ts';
import { rpcCallCount } from '../access/rpc-usage.ts';
import type { PaidCall } from './x402-gateway.ts';
import { PaymentRefusal } from './refusals.ts';
import { McpPayments } from './x402-mcp.ts';
import { limitPaidMcp } from './x402-pricing.ts';
import type { X402Door } from './x402-door.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** A keyless call of the x402 plan: 'pending' until priced and paid, then its payment (a POST
     *  /mcp without one: its tool calls' payments, x402-mcp.ts). null elsewhere. */
    x402: 'pending' | PaidCall | McpPayments | null;
  }
}

export const PAYMENT_HEADER = 'payment-signature';
export const LEGACY_PAYMENT_HEADER = 'x-payment';

/** The doors a keyless request may pay for, by its route's policy (route-policy.ts): every
 *  keyed door of an interface, and export jobs and their files, except live streams (no
 *  per-call answer to price). A route that declares no interface is not payable. */
export function payable(policy: RoutePolicy): boolean {
  if (policy.access !== 'keyed' || policy.door === 'stream') return false;
  return policy.interface !== 'other' || policy.door === 'export' || policy.door === 'download';
}

/**
 * The calls a keyless request's price is computed for: each call of a JSON-RPC batch, each
 * tool call of an MCP POST, otherwise one. Each counts against the address's budget of 402
 * answers, so a batch cannot buy a hundred prices for one.
 */
export function pricedCalls(req: FastifyRequest): number {
  const route = req.routeOptions.url ?? '';
  if (route === '/v1/rpc') return rpcCallCount(req.body);
  if (route !== '/mcp' || !Array.isArray(req.body)) return 1;
  return Math.max(1, req.body.filter((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call').length);
}

/** A host name (DNS labels, or an IPv6 literal) and its port, as a Host header may name one. */
const HOST_NAME = /^(?:(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The resource as the 402 names it: the request's URL without its query. The Host header is
 * the caller's: one no host name could be (a DNS name has at most 253 characters) is left
 * out, not echoed twice (message and PAYMENT-REQUIRED header) at its full length.
 */
function resourceUrl(req: FastifyRequest): string {
  const path = req.url.split('?')[0] ?? '';
  return req.host.length <= HOST_HEADER_MAX_CHARS && HOST_NAME.test(req.host) ? `${req.protocol}://${req.host}${path}` : path;
}

/** Answer 402 with the quote's requirements and the reason. */
async function sendRequired(door: X402Door, req: FastifyRequest, reply: FastifyReply, refusal?: PaymentRefusal): Promise<void> {
  const quote = await door.gateway.quote(await door.price(req), resourceUrl(req), `${req.method} ${req.routeOptions.url ?? ''}`);
  const { body, header } = await door.gateway.required(quote, refusal);
  reply.code(402).header('payment-required', header).header('cache-control', 'no-store');
  await reply.send({ error: 'Payment Required', message: body.error ?? 'payment required', x402: body });
}

/**
 * Price the pending call and check its payment. The payment when it verified (claimed for
 * this call); undefined when the 402 was sent. Nothing of the call runs here. A POST /mcp
 * without the header pays per tool call inside MCP (x402-mcp.ts): its payments, verified.
 */
export async function admitPayment(door: X402Door, req: FastifyRequest, reply: FastifyReply): Promise<PaidCall | McpPayments | undefined> {
  const header = req.headers[PAYMENT_HEADER] ?? req.headers[LEGACY_PAYMENT_HEADER];
  const unpaid = typeof header !== 'string' || header.trim() === '';
  if (req.routeOptions.url === '/mcp') limitPaidMcp(req.body);
  if (unpaid && req.routeOptions.url === '/mcp') {
    const payments = await McpPayments.admit(door, req);
    // The payers' turns it holds go back once it is answered (settleStep), or its client left.
    reply.raw.once('close', () => payments.held.releaseAll());
    return payments;
  }
  if (unpaid) {
    await sendRequired(door, req, reply);
    return undefined;
  }
  try {
    const payload = door.gateway.decode((header as string).trim());
    const quote = await door.gateway.quote(await door.price(req), resourceUrl(req), `${req.method} ${req.routeOptions.url ?? ''}`);
    const paid = await door.gateway.verify(payload, quote);
    // Its payer's turn goes back once it is settled or not (settleStep), or its client left.
    reply.raw.once('close', paid.release);
    return paid;
  } catch (err) {
    if (!(err instanceof PaymentRefusal)) throw err;
    req.log.info({ reason: err.code }, 'x402 payment refused');
    await sendRequired(door, req, reply, err);
    return undefined;
  }
}

/**
 * Whether a paid answer of `status` is settled (docs/x402.md, "which failed paid answers are
 * settled"): a success; a refusal for the caller's reason (4xx) once the call's statements were
 * admitted to run (its budget charged: too large an answer, a statement timeout, a cost cap met
 * mid-call), since that engine work is done; not one refused before any engine work, nor a
 * failure on our side (5xx).
 */
export function settles(req: FastifyRequest, status: number): boolean {
  if (status < 400) return true;
  return status < 500 && (req.budget?.spent ?? 0) > 0;
}

/** The edge step that settles a paid call's successful answer before it leaves. */
export function settleStep(door: X402Door): EdgeStep {
  return (req, reply, payload) => {
    const paid = req.x402;
    // Tool calls paid inside MCP are settled by the door, each with its own result (x402-mcp.ts).
    if (paid === null || paid === 'pending') return payload;
    if (paid instanceof McpPayments) {
      paid.held.releaseAll();
      return payload;
    }
    if (!settles(req, reply.statusCode)) {
      paid.release();
      return payload;
    }
    return door.gateway.settle(paid).then(
      ({ result, header }) => {
        reply.header('payment-response', header);
        door.settled(req, paid, result.transaction);
        return payload;
      },
      (err: unknown) => {
        const refusal = err instanceof PaymentRefusal ? err : new PaymentRefusal('settlement_failed', String(err));
        req.log.warn({ reason: refusal.message }, 'x402 settlement failed; the answer is withheld');
        (payload as Partial<Readable> | null)?.destroy?.();
        reply.code(402).header('content-type', 'application/json; charset=utf-8').removeHeader('content-length');
        return JSON.stringify({ error: 'Payment Required', message: refusal.message });
      },
    );
  };
}
