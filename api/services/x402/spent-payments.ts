// Payments already used by this process, so a payload replayed to it gets 402 at once, without
// asking the store. A payment is claimed once it verified, before its call runs: two copies
// sent at once cannot both run. Every other process learns of it from the claims table
// (migration 101, X402PaymentStore.claim). Kept for X402_PRICES.spentPaymentMs (past a
// blockhash's life the chain refuses the transaction anyway); bounded, oldest dropped first.
import { X402_PRICES } from '../../../core/plans.ts';

export class SpentPayments {
  private readonly spent = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly keep = X402_PRICES.spentPaymentsKept,
    private readonly ttlMs = X402_PRICES.spentPaymentMs,
  ) {}

  has(id: string): boolean {
    const at = this.spent.get(id);
    return at !== undefined && this.now() - at < this.ttlMs;
  }

  /** Mark `id` spent; false when it already was (a replay). */
  claim(id: string): boolean {
    if (this.has(id)) return false;
    this.spent.set(id, this.now());
    for (const [old, at] of this.spent) {
      if (this.spent.size <= this.keep && this.now() - at < this.ttlMs) break;
      this.spent.delete(old);
    }
    return true;
  }
}
