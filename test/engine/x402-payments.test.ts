// The x402 plan end to end on a real Solana runtime (LiteSVM, in-process): keyless calls get
// 402 with requirements priced by the cost model; the official x402 client for Solana signs
// a real SPL transfer with a locally generated key pair; the in-process facilitator verifies
// and settles it on the chain; balances show the payee paid exactly the price, once. A paid
// answer equals an x402 key's; every refused payment is a 402 with its reason, and no run.
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Budget } from '../../core/budget.ts';
import { createLogger } from '../../core/logger.ts';
import type { Door } from '../../core/limits/answers.ts';
import { Analytics } from '../../api/analytics/analytics.ts';
import { dryRunCost } from '../../api/analytics/cost/dry-run.ts';
import { CATALOG } from '../../api/catalog/catalog.ts';
import { CatalogMethods } from '../../api/services/positional/positional-calls.ts';
import { boundTo } from '../../warehouse/budgeted-warehouse.ts';
import { createX402Door } from '../../api/services/x402/x402-door.ts';
import { X402PaymentStore } from '../../warehouse/x402-payment-store.ts';
import { answerOf as answerText, startX402App, type Call, type X402App } from '../support/x402-app.ts';
import type { LightMyRequestResponse } from 'fastify';

let t: X402App;
beforeAll(async () => {
  t = await startX402App();
});
afterAll(async () => t?.cleanup());

const send = (call: Call, headers: Record<string, string> = {}) => t.send(call, headers);
const requiredOf = (res: LightMyRequestResponse): PaymentRequired => t.requiredOf(res);
const signed = (res: LightMyRequestResponse): Promise<PaymentPayload> => t.signed(res);
const header = (p: PaymentPayload): Record<string, string> => t.header(p);
const answerOf = (res: LightMyRequestResponse): unknown => answerText(res.body);

const RPC: Call = { method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } };
const REST: Call = { method: 'GET', url: '/api/v1/stats' };
const GRAPHQL: Call = { method: 'POST', url: '/graphql', payload: { query: '{ protocols { name } }' } };
const SQL_LIGHT: Call = { method: 'POST', url: '/v1/query', payload: { query: 'SELECT 1 AS one' } };
const SQL_HEAVY: Call = { method: 'POST', url: '/v1/query', payload: { query: 'SELECT count() AS n FROM transactions' } };

describe('keyless calls with x402 on', () => {
  it.each([
    ['JSON-RPC', RPC],
    ['REST', REST],
    ['SQL', SQL_HEAVY],
    ['GraphQL', GRAPHQL],
  ])("%s: unpaid -> 402 with requirements; paid -> the x402 key's answer, settled once", async (_door, call) => {
    const unpaid = await send(call);
    expect(unpaid.statusCode).toBe(402);
    const required = requiredOf(unpaid);
    const [req] = required.accepts;
    expect(req).toMatchObject({
      scheme: 'exact',
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      asset: t.chain.mint.address,
      payTo: t.chain.payee.address,
      maxTimeoutSeconds: 60,
    });
    const price = BigInt(req!.amount);
    const [payeeBefore, payerBefore] = [await t.chain.balance(t.chain.payee.address), await t.chain.balance(t.chain.payer.address)];

    const payment = header(await signed(unpaid));
    const paid = await send(call, payment);
    const keyed = await send(call, t.keyHeaders);
    expect(paid.statusCode).toBe(200);
    expect(answerOf(paid)).toEqual(answerOf(keyed));
    const settlement = t.http.getPaymentSettleResponse((n) => paid.headers[n.toLowerCase()] as string | undefined);
    expect(settlement).toMatchObject({ success: true, network: req!.network });
    expect(await t.chain.balance(t.chain.payee.address)).toBe(payeeBefore + price);
    expect(await t.chain.balance(t.chain.payer.address)).toBe(payerBefore - price);

    // The same payment again: 402, never a second answer, never a second transfer.
    const replay = await send(call, payment);
    expect(replay.statusCode).toBe(402);
    expect(replay.json().message).toMatch(/^replayed_payment/);
    expect(await t.chain.balance(t.chain.payee.address)).toBe(payeeBefore + price);
  });

  it('prices by the cost model: a heavier question costs more, a batch each call', async () => {
    const amount = async (call: Call) => BigInt(requiredOf(await send(call)).accepts[0]!.amount);
    const light = await amount(SQL_LIGHT);
    const heavy = await amount(SQL_HEAVY);
    expect(light).toBe(1000n);
    expect(heavy).toBeGreaterThan(light);
    // The figure a key's answer is charged (X-Stats-Cost) is the price in cost units.
    const keyed = await send(SQL_HEAVY, t.keyHeaders);
    expect(BigInt(String(keyed.headers['x-stats-cost']))).toBe(heavy);
    const batch = { ...RPC, payload: [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getProtocols', params: [] })) };
    expect(await amount(batch)).toBe(3000n);
  });
});

describe('every door priced by the cost model', () => {
  const rpc = (method: string, params: unknown[]): Call => ({ method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method, params } });
  const amount = async (call: Call) => BigInt(requiredOf(await send(call)).accepts[0]!.amount);
  /** The cost model's figure for what `answer` runs: its statements' estimated rows plus the base cost per statement. */
  async function costModel(door: Door, answer: (a: Analytics) => Promise<unknown>): Promise<bigint> {
    const s = t.ctx.services;
    const cost = await dryRunCost((wh) => new Analytics(wh, s.registry, s.dataVersion, s.pageTokens), boundTo(s.wh, new Budget('x402', door)), answer);
    return BigInt(Math.max(1000, Math.ceil(cost.score)));
  }

  it('JSON-RPC and REST: the figure of the statements the call runs; a wider question costs more', async () => {
    const methods = new CatalogMethods(CATALOG);
    const whole = [{ protocolName: 'jupiter_v6' }];
    const hour = [{ protocolName: 'jupiter_v6', blockTime: { gte: 1_700_000_000, lte: 1_700_003_600 } }];
    const wholePrice = await amount(rpc('getProtocolStats', whole));
    expect(wholePrice).toBe(await costModel('rpc', (a) => methods.call(a, 'getProtocolStats', whole)));
    expect(wholePrice).toBeGreaterThan(await amount(rpc('getProtocolStats', hour)));
    // A listing reads more than one protocol's hourly figures; a name list reads nothing.
    expect(await amount(rpc('getTransactions', [{}]))).toBeGreaterThan(wholePrice);
    expect(await amount(rpc('getProtocols', []))).toBe(1000n);
    // A batch: the sum of its calls.
    const batch = { ...RPC, payload: [rpc('getProtocolStats', whole).payload, rpc('getProtocols', []).payload] };
    expect(await amount(batch)).toBe(wholePrice + 1000n);
    const stats = await amount(REST);
    expect(stats).toBeGreaterThan(1000n);
    expect(stats).toBe(await costModel('rest', (a) => a.globalStats()));
  });

  it('GraphQL: what the answer is charged (extensions.cost.requested); more fields cost more', async () => {
    const stats: Call = { method: 'POST', url: '/graphql', payload: { query: '{ protocolStats(filters: {protocols: ["jupiter_v6"]}) { protocolName } }' } };
    const both: Call = {
      method: 'POST',
      url: '/graphql',
      payload: {
        query: '{ protocolStats(filters: {protocols: ["jupiter_v6"]}) { protocolName } transactions(pagination: {first: 5}) { edges { node { signature } } } }',
      },
    };
    const price = await amount(stats);
    const keyed = await send(stats, t.keyHeaders);
    expect(keyed.json().extensions.cost.requested).toBeGreaterThan(1000);
    expect(price).toBe(BigInt(keyed.json().extensions.cost.requested));
    expect(await amount(both)).toBe(BigInt((await send(both, t.keyHeaders)).json().extensions.cost.requested));
    expect(await amount(both)).toBeGreaterThan(price);
    expect(await amount(GRAPHQL)).toBe(1000n);
  });
});

describe('refused payments: a 402 with the reason, nothing run, nothing paid', () => {
  /** A payment signed for requirements changed by `change`, claiming (accepted) the ones asked. */
  async function signedFor(change: (r: PaymentRequired['accepts'][number]) => void, claimAsked = true): Promise<PaymentPayload> {
    const required = requiredOf(await send(RPC));
    const asked = structuredClone(required.accepts[0]!);
    change(required.accepts[0]!);
    const payload = await t.http.createPaymentPayload(required);
    return claimAsked ? { ...payload, accepted: asked } : payload;
  }

  async function expectRefused(payment: PaymentPayload, reason: RegExp): Promise<void> {
    const before = await t.ledger();
    const res = await send(RPC, header(payment));
    expect(res.statusCode).toBe(402);
    expect(res.json().message).toMatch(reason);
    expect(res.headers['payment-required']).toBeTypeOf('string');
    expect(await t.ledger()).toEqual(before);
  }

  it('underpaid: a transfer of less than the price', async () => {
    await expectRefused(
      await signedFor((r) => {
        r.amount = '1';
      }),
      /^underpaid/,
    );
    await expectRefused(
      await signedFor((r) => {
        r.amount = '1';
      }, false),
      /^underpaid/,
    );
  });

  it('wrong mint: a transfer of another token', async () => {
    const other = await t.chain.createMint(t.chain.payee, [t.chain.payer.address, t.chain.payee.address], 1_000_000_000n);
    await expectRefused(
      await signedFor((r) => {
        r.asset = other.address;
      }),
      /^wrong_mint/,
    );
    await expectRefused(
      await signedFor((r) => {
        r.asset = other.address;
      }, false),
      /^wrong_mint/,
    );
  });

  it('wrong recipient: a transfer to another wallet', async () => {
    await expectRefused(
      await signedFor((r) => {
        r.payTo = t.chain.payer.address;
      }),
      /^wrong_recipient/,
    );
    await expectRefused(
      await signedFor((r) => {
        r.payTo = t.chain.payer.address;
      }, false),
      /^wrong_recipient/,
    );
  });

  it('forged: a transaction changed after it was signed, or no payment at all', async () => {
    const payload = await signedFor(() => {});
    const tx = Buffer.from(String(payload.payload.transaction), 'base64');
    tx[tx.length - 1] = tx[tx.length - 1]! ^ 1;
    await expectRefused({ ...payload, payload: { transaction: tx.toString('base64') } }, /^invalid_payment/);
    const res = await send(RPC, { 'payment-signature': 'bm90IGEgcGF5bWVudA==' });
    expect(res.statusCode).toBe(402);
    expect(res.json().message).toMatch(/^malformed_payment/);
    // A payload whose accepted requirements are null or a list: refused as unreadable, not a 500.
    for (const accepted of [null, []]) {
      const hostile = Buffer.from(JSON.stringify({ x402Version: 2, payload: { transaction: 'AAAA' }, accepted })).toString('base64');
      const r = await send(RPC, { 'payment-signature': hostile });
      expect(r.statusCode).toBe(402);
      expect(r.json().message).toMatch(/^malformed_payment/);
    }
  });

  it('expired: a transaction whose blockhash the chain no longer knows', async () => {
    const payload = await signedFor(() => {});
    for (let i = 0; i < 3; i++) t.chain.svm.expireBlockhash();
    await expectRefused(payload, /^expired_payment/);
  });
});

describe('one call per payment across API processes', () => {
  it('a payment used here is refused by another process (its own memory empty) through the claims table', async () => {
    const unpaid = await send(RPC);
    const payment = await signed(unpaid);
    expect((await send(RPC, header(payment))).statusCode).toBe(200);
    // A second API process: its own gateway and memory of spent payments, the same store.
    const s = t.ctx.services;
    const other = await createX402Door({
      config: s.config.x402,
      sandbox: s.sqlSandbox,
      payments: new X402PaymentStore(s.wh),
      logger: createLogger('silent'),
      chain: (feePayer) => t.chain.signer(feePayer),
      wh: s.wh,
      analyticsOver: () => s.analytics,
    });
    const quote = await other.gateway.quote(1000, 'http://localhost/v1/rpc', 'POST /v1/rpc');
    await expect(other.gateway.verify(payment, quote)).rejects.toThrow(/^replayed_payment/);
    // A fresh payment is that process's to run.
    const fresh = await t.http.createPaymentPayload(requiredOf(await send(RPC)));
    await expect(other.gateway.verify(fresh, quote)).resolves.toMatchObject({ payer: t.chain.payer.address });
  });
});
