// Why a payment was refused, in words a caller can act on: each refusal is a 402 whose
// `error` (the PaymentRequired's error field) starts with a stable reason code.
import { createHash } from 'node:crypto';
import { getBase64Encoder, getTransactionDecoder } from '@solana/kit';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { X402_CAUSE_MAX_CHARS, X402_ECHO_MAX_CHARS } from '../../../core/limits/access.ts';

export type RefusalCode =
  | 'payment_required'
  | 'malformed_payment'
  | 'replayed_payment'
  | 'wrong_network'
  | 'wrong_mint'
  | 'wrong_recipient'
  | 'underpaid'
  | 'expired_payment'
  | 'invalid_payment'
  | 'settlement_failed';

export class PaymentRefusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PaymentRefusal';
  }
}

/** A value of the caller's, echoed in a refusal (the 402's message and its PAYMENT-REQUIRED header): clipped. */
const echo = (v: unknown): string => {
  const text = String(v);
  return text.length > X402_ECHO_MAX_CHARS ? `${text.slice(0, X402_ECHO_MAX_CHARS)}…` : text;
};

/** The mismatch between what the caller signed for and what we ask, before the facilitator is asked. */
export function acceptedMismatch(accepted: PaymentRequirements | undefined, ours: PaymentRequirements): PaymentRefusal | undefined {
  if (typeof accepted !== 'object' || accepted === null || Array.isArray(accepted))
    return new PaymentRefusal('malformed_payment', 'the payment names no accepted requirements');
  if (accepted.scheme !== ours.scheme || accepted.network !== ours.network) {
    return new PaymentRefusal(
      'wrong_network',
      `this service takes scheme ${ours.scheme} on ${ours.network}, the payment is ${echo(accepted.scheme)} on ${echo(accepted.network)}`,
    );
  }
  if (accepted.asset !== ours.asset) return new PaymentRefusal('wrong_mint', `pay in the token of mint ${ours.asset}, not ${echo(accepted.asset)}`);
  if (accepted.payTo !== ours.payTo) return new PaymentRefusal('wrong_recipient', `pay ${ours.payTo}, not ${echo(accepted.payTo)}`);
  if (!/^\d{1,30}$/.test(String(accepted.amount)) || BigInt(accepted.amount) < BigInt(ours.amount)) {
    return new PaymentRefusal('underpaid', `this call costs ${ours.amount} atomic units; the payment offers ${echo(accepted.amount)}`);
  }
  return undefined;
}

/** The facilitator's refusal of a verified transaction, by its reason. */
export function verifyRefusal(reason: string | undefined, message: string | undefined): PaymentRefusal {
  const r = reason ?? 'unknown';
  const detail = `${r}${message ? `: ${message.slice(0, X402_CAUSE_MAX_CHARS)}` : ''}`;
  if (/blockhash|expired/i.test(`${r} ${message ?? ''}`))
    return new PaymentRefusal('expired_payment', `the payment's transaction has expired (its blockhash is too old); sign a new one (${detail})`);
  if (/amount/.test(r)) return new PaymentRefusal('underpaid', `the transaction does not transfer the price (${detail})`);
  if (/mint/.test(r)) return new PaymentRefusal('wrong_mint', `the transaction transfers another token (${detail})`);
  if (/recipient|destination/.test(r)) return new PaymentRefusal('wrong_recipient', `the transaction pays another account (${detail})`);
  return new PaymentRefusal('invalid_payment', `the facilitator refused the payment (${detail})`);
}

/**
 * One payment's identity: the message its Solana transaction signs, as the chain and the
 * facilitator's settlement cache count payments. Not the base64 text: a lenient decoder
 * reads one transaction from many spellings (padding dropped or added, bytes after it),
 * and a payer may sign the same message again. Undefined when there is no transaction.
 */
export function paymentMessage(payload: PaymentPayload): Uint8Array | undefined {
  const tx = (payload.payload as { transaction?: unknown }).transaction;
  if (typeof tx !== 'string') return undefined;
  try {
    return Uint8Array.from(getTransactionDecoder().decode(getBase64Encoder().encode(tx)).messageBytes);
  } catch {
    return undefined;
  }
}

/** One payment's identity: a digest of its signed message (the same transfer sent twice, or spelled twice, is one payment). */
export function paymentId(payload: PaymentPayload): string {
  return createHash('sha256')
    .update(paymentMessage(payload) ?? JSON.stringify(payload.payload))
    .digest('hex');
}
