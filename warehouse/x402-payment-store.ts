// Settled x402 payments (migration 100): written once per paid call after its settlement,
// read by the operator as revenue and calls per payer. And their claims (migration 101): the
// one call a payment runs, across every API process.
import { randomUUID } from 'node:crypto';
import { TABLES } from './tables.ts';
import type { Warehouse } from './warehouse.ts';

export interface X402Payment {
  settledAt: number;
  payer: string;
  /** Atomic units of the asset. */
  amount: bigint;
  asset: string;
  network: string;
  transaction: string;
  interface: string;
  route: string;
  costUnits: number;
}

export interface PayerRevenue {
  payer: string;
  calls: number;
  /** Atomic units, as a decimal string (sums may pass 2^53). */
  amount: string;
  asset: string;
  lastPaidAt: string;
}

const chMillis = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

export class X402PaymentStore {
  constructor(private readonly wh: Warehouse) {}

  async insert(p: X402Payment): Promise<void> {
    await this.wh.insert(TABLES.x402Payments, [
      {
        settled_at: chMillis(p.settledAt),
        payer: p.payer,
        amount: p.amount.toString(),
        asset: p.asset,
        network: p.network,
        transaction: p.transaction,
        interface: p.interface,
        route: p.route,
        cost_units: Math.round(p.costUnits),
      },
    ]);
  }

  /**
   * Claim payment `id` for one call: our claim row first, then the payment's first claim by
   * the server's insert clock. True when that one is ours; false when another call (in any
   * process) claimed it first: a replay.
   */
  async claim(id: string): Promise<boolean> {
    const claim = randomUUID();
    await this.wh.insert(TABLES.x402PaymentClaims, [{ payment_id: id, claim }]);
    const [first] = await this.wh.query<{ claim: string }>(
      `SELECT claim FROM ${TABLES.x402PaymentClaims} WHERE payment_id = {id:String} ORDER BY claimed_at, claim LIMIT 1`,
      { params: { id } },
    );
    return first?.claim === claim;
  }

  /** Calls and revenue per payer (and asset) between two instants, the largest payers first. */
  async perPayer(fromMs: number, toMs: number): Promise<PayerRevenue[]> {
    // The sum's text under a name of its own: ClickHouse resolves an alias before a column, so
    // "AS amount" made sum(amount) in ORDER BY a sum of that text.
    const rows = await this.wh.query<{ payer: string; calls: string; total: string; asset: string; last: string }>(
      `SELECT payer, count() AS calls, toString(sum(amount)) AS total, asset, toString(max(settled_at)) AS last
       FROM ${TABLES.x402Payments}
       WHERE settled_at >= fromUnixTimestamp64Milli({from:Int64}) AND settled_at < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY payer, asset ORDER BY sum(amount) DESC, payer`,
      { params: { from: fromMs, to: toMs } },
    );
    return rows.map((r) => ({ payer: r.payer, calls: Number(r.calls), amount: r.total, asset: r.asset, lastPaidAt: `${r.last.replace(' ', 'T')}Z` }));
  }
}
