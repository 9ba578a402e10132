// Paid calls, framework-neutral (the Fastify adapter is x402-fastify.ts): the requirements of
// a call priced in cost units, the check of a payment against them (ours first: network,
// mint, recipient, amount, replay; then the facilitator's verification of the signed
// transaction), and its settlement. Nothing here runs the call.
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { X402Config } from '../../../core/config/load-config.ts';
import { X402_CAUSE_MAX_CHARS } from '../../../core/limits/access.ts';
import { x402Price } from '../../../core/plans.ts';
import { acceptedMismatch, PaymentRefusal, paymentId, paymentMessage, verifyRefusal } from './refusals.ts';
import { SpentPayments } from './spent-payments.ts';
import { type HeldTurns, PayerTurns } from './payer-turns.ts';

/** A call's price: its cost units and what they cost. */
export interface Quote {
  units: number;
  requirements: PaymentRequirements;
  /** The resource as the 402 names it (the request's URL). */
  url: string;
  description: string;
}

/** A payment that verified and is claimed for one call. */
export interface PaidCall {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  payer: string;
  amount: bigint;
  units: number;
  /** Gives back the payer's turn (payer-turns.ts): once the answer is settled, or will not be. Idempotent. */
  release: () => void;
}

export class X402Gateway {
  readonly spent: SpentPayments;
  /** The last settlement of each payer still under way (settle). */
  private readonly settling = new Map<string, Promise<void>>();
  /** One paid call in flight per payer, from verification to settlement. */
  private readonly turns = new PayerTurns();

  /**
   * `claim`: claims a verified payment in the deployment's store (false: another process has
   * it); the memory of spent payments answers replays to this process without asking.
   */
  constructor(
    readonly server: x402ResourceServer,
    readonly config: X402Config,
    now: () => number = Date.now,
    private readonly claim: (id: string) => Promise<boolean> = async () => true,
  ) {
    this.spent = new SpentPayments(now);
  }

  /** The requirements of a call the cost model prices at `units`. */
  async quote(units: number, url: string, description: string): Promise<Quote> {
    const amount = x402Price(units, this.config.prices);
    const [requirements] = await this.server.buildPaymentRequirements({
      scheme: 'exact',
      network: this.config.network as PaymentRequirements['network'],
      payTo: this.config.payTo,
      price: { asset: this.config.asset, amount: amount.toString() },
      maxTimeoutSeconds: this.config.validitySeconds,
    });
    if (requirements === undefined) throw new Error('x402: the facilitator offers no exact payment on the configured network');
    return { units, requirements, url, description };
  }

  /** The 402's body and its PAYMENT-REQUIRED header, with the reason of a refused payment. */
  async required(quote: Quote, refusal?: PaymentRefusal, retry = 'the PAYMENT-SIGNATURE header'): Promise<{ body: PaymentRequired; header: string }> {
    const error =
      refusal?.message ??
      `payment_required: this call costs ${quote.requirements.amount} atomic units of ${quote.requirements.asset} (${quote.units} cost units); pay with the x402 exact scheme and retry with ${retry}`;
    const body = await this.server.createPaymentRequiredResponse(
      [quote.requirements],
      { url: quote.url, description: quote.description, mimeType: 'application/json' },
      error,
    );
    return { body, header: encodePaymentRequiredHeader(body) };
  }

  /** Decode a PAYMENT-SIGNATURE header (or an MCP `_meta["x402/payment"]` object); refused when it is not a payment. */
  decode(header: unknown): PaymentPayload {
    try {
      const payload = typeof header === 'string' ? decodePaymentSignatureHeader(header) : (header as PaymentPayload);
      if (typeof payload !== 'object' || payload === null || typeof payload.payload !== 'object' || payload.payload === null) throw new Error('no payload');
      if (payload.x402Version !== 2) throw new Error(`x402Version ${String(payload.x402Version)} (this service speaks version 2)`);
      // Refused here, not by the facilitator: it would log a stack trace per junk payload.
      if (paymentMessage(payload) === undefined) throw new Error('payload.transaction is not a base64 Solana transaction');
      return payload;
    } catch (err) {
      throw new PaymentRefusal('malformed_payment', `the payment cannot be read: ${(err as Error).message.slice(0, X402_CAUSE_MAX_CHARS)}`);
    }
  }

  /**
   * Check `payload` against the quote and claim it: throws a PaymentRefusal, never runs the
   * call. The amount asked of the facilitator is what the caller signed (at least the price).
   * The payer's turn is taken before the claim (`held`: turns a request holds already).
   */
  async verify(payload: PaymentPayload, quote: Quote, held?: HeldTurns): Promise<PaidCall> {
    const id = paymentId(payload);
    if (this.spent.has(id)) throw replayed();
    const mismatch = acceptedMismatch(payload.accepted, quote.requirements);
    if (mismatch !== undefined) throw mismatch;
    const requirements = { ...quote.requirements, amount: payload.accepted.amount };
    let verdict: Awaited<ReturnType<x402ResourceServer['verifyPayment']>>;
    try {
      verdict = await this.server.verifyPayment(payload, requirements);
    } catch (err) {
      throw verifyRefusal('verify_error', (err as Error).message);
    }
    if (!verdict.isValid) throw verifyRefusal(verdict.invalidReason, verdict.invalidMessage);
    const payer = verdict.payer ?? 'unknown';
    const release = await this.turnOf(payer, id, payload, requirements, held);
    try {
      // Claimed after verification and before the call runs: of two copies, one runs, here
      // (memory) and in every other process (the store).
      if (!this.spent.claim(id)) throw replayed();
      if (!(await this.claim(id))) throw replayed();
    } catch (err) {
      release();
      throw err;
    }
    return { payload, requirements, payer, amount: BigInt(requirements.amount), units: quote.units, release };
  }

  /**
   * `payer`'s turn for this payment; its release (a no-op for a turn `held` by the request,
   * released with it). A payment that waited is checked again once the call before it settled:
   * a copy of a payment that ran is a replay, one whose funds it spent is refused.
   */
  private async turnOf(payer: string, id: string, payload: PaymentPayload, requirements: PaymentRequirements, held?: HeldTurns): Promise<() => void> {
    if (held?.byPayer.has(payer)) return () => {};
    // A request that holds a turn never waits for another (two MCP POSTs paying with the same
    // two wallets in opposite orders would wait for each other): the payment is refused.
    if (held !== undefined && held.byPayer.size > 0 && this.turns.busy(payer)) {
      throw new PaymentRefusal('invalid_payment', `another paid call of payer ${payer} is in flight; pay with it after that call, or in another request`);
    }
    const { release, waited } = await this.turns.take(payer);
    if (waited) {
      try {
        if (this.spent.has(id)) throw replayed();
        const again = await this.server.verifyPayment(payload, requirements).catch((err: unknown) => {
          throw verifyRefusal('verify_error', (err as Error).message);
        });
        if (!again.isValid) throw verifyRefusal(again.invalidReason, again.invalidMessage);
      } catch (err) {
        release();
        throw err;
      }
    }
    if (held === undefined) return release;
    held.byPayer.set(payer, release);
    return () => {};
  }

  /**
   * Settle a paid call whose answer succeeded; its PAYMENT-RESPONSE header, or the refusal.
   * One payer's settlements go one at a time: payments verified together may spend the same
   * funds (each was simulated alone), and sent together the losers land as failed
   * transactions whose fees our fee payer pays (settlement skips preflight). In turn, each
   * is simulated again after the last one landed, and refused before it is sent.
   */
  settle(paid: PaidCall): Promise<{ result: SettleResponse; header: string }> {
    const turn = (this.settling.get(paid.payer) ?? Promise.resolve()).then(() => this.settleNow(paid)).finally(paid.release);
    const done = turn.then(
      () => undefined,
      () => undefined,
    );
    this.settling.set(paid.payer, done);
    void done.then(() => {
      if (this.settling.get(paid.payer) === done) this.settling.delete(paid.payer);
    });
    return turn;
  }

  private async settleNow(paid: PaidCall): Promise<{ result: SettleResponse; header: string }> {
    let result: SettleResponse;
    try {
      result = await this.server.settlePayment(paid.payload, paid.requirements);
    } catch (err) {
      throw new PaymentRefusal('settlement_failed', `the payment could not be settled: ${(err as Error).message.slice(0, X402_CAUSE_MAX_CHARS)}`);
    }
    if (!result.success)
      throw new PaymentRefusal('settlement_failed', `the payment could not be settled: ${result.errorReason ?? ''} ${result.errorMessage ?? ''}`.trim());
    return { result, header: encodePaymentResponseHeader(result) };
  }
}

const replayed = (): PaymentRefusal => new PaymentRefusal('replayed_payment', 'this payment was already used for a call; sign a new one');
