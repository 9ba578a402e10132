// The x402 plan end to end on a real Solana runtime (LiteSVM, in-process): keyless calls get
// 402 with requirements priced by the cost model; the official x402 client for Solana signs
// a real SPL transfer with a locally generated key pair; the in-process facilitator verifies
// and settles it on the chain; balances show the payee paid exactly the price, once. A paid
// answer equals an x402 key's; every refused payment is a 402 with its reason, and no run.
import { x402Client } from '@x402/core/client';
import { x402HTTPClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from './support/api-key.ts';
import { ingestDemo } from './support/fixtures.ts';
import { Chain } from './support/litesvm-chain.ts';
import { startApp } from './support/services.ts';

let chain: Chain;
let ctx: Awaited<ReturnType<typeof startApp>>;
let keyHeaders: Record<string, string>;
let http: x402HTTPClient;

beforeAll(async () => {
  chain = await new Chain().start(1_000_000_000n);
  // One atomic unit per cost unit, so the price shows the cost model's figure itself.
  ctx = await startApp(chain.x402Env(), { x402Chain: (feePayer) => chain.signer(feePayer) });
  await ingestDemo(ctx.services, 2000);
  keyHeaders = { 'x-api-key': (await createKey(ctx.app, 'x402')).key };
  http = new x402HTTPClient(x402Client.fromConfig({ schemes: [{ network: 'solana:*', client: new ExactSvmScheme(chain.payer, { rpcUrl: chain.rpcUrl }) }], spendControls: false }));
});
afterAll(async () => {
  await ctx?.cleanup();
  chain?.close();
});

type Call = { method: 'GET' | 'POST'; url: string; payload?: object };
const send = (call: Call, headers: Record<string, string> = {}) => ctx.app.inject({ ...call, headers });
const requiredOf = (res: LightMyRequestResponse): PaymentRequired =>
  http.getPaymentRequiredResponse((n) => res.headers[n.toLowerCase()] as string | undefined, res.json());
const signed = async (res: LightMyRequestResponse): Promise<PaymentPayload> => http.createPaymentPayload(requiredOf(res));
const header = (p: PaymentPayload): Record<string, string> => http.encodePaymentSignatureHeader(p);

/** An answer without its statistics (elapsed time, and reads a cached answer did not repeat). */
const answerOf = (res: LightMyRequestResponse): unknown => JSON.parse(res.body, (k, v) => (k === 'stats' ? undefined : v));

async function paidRows(): Promise<number> {
  const [r] = await ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM x402_payments');
  return Number(r?.n ?? 0);
}

const RPC: Call = { method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } };
const REST: Call = { method: 'GET', url: '/api/v1/stats' };
const GRAPHQL: Call = { method: 'POST', url: '/graphql', payload: { query: '{ protocols { name } }' } };
const SQL_LIGHT: Call = { method: 'POST', url: '/v1/query', payload: { query: 'SELECT 1 AS one' } };
const SQL_HEAVY: Call = { method: 'POST', url: '/v1/query', payload: { query: 'SELECT count() AS n FROM transactions' } };

describe('keyless calls with x402 on', () => {
  it.each([['JSON-RPC', RPC], ['REST', REST], ['SQL', SQL_HEAVY], ['GraphQL', GRAPHQL]])('%s: unpaid -> 402 with requirements; paid -> the x402 key\'s answer, settled once', async (_door, call) => {
    const unpaid = await send(call);
    expect(unpaid.statusCode).toBe(402);
    const required = requiredOf(unpaid);
    const [req] = required.accepts;
    expect(req).toMatchObject({ scheme: 'exact', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', asset: chain.mint.address, payTo: chain.payee.address, maxTimeoutSeconds: 60 });
    const price = BigInt(req!.amount);
    const [payeeBefore, payerBefore] = [await chain.balance(chain.payee.address), await chain.balance(chain.payer.address)];

    const payment = header(await signed(unpaid));
    const paid = await send(call, payment);
    const keyed = await send(call, keyHeaders);
    expect(paid.statusCode).toBe(200);
    expect(answerOf(paid)).toEqual(answerOf(keyed));
    const settlement = http.getPaymentSettleResponse((n) => paid.headers[n.toLowerCase()] as string | undefined);
    expect(settlement).toMatchObject({ success: true, network: req!.network });
    expect(await chain.balance(chain.payee.address)).toBe(payeeBefore + price);
    expect(await chain.balance(chain.payer.address)).toBe(payerBefore - price);

    // The same payment again: 402, never a second answer, never a second transfer.
    const replay = await send(call, payment);
    expect(replay.statusCode).toBe(402);
    expect(replay.json().message).toMatch(/^replayed_payment/);
    expect(await chain.balance(chain.payee.address)).toBe(payeeBefore + price);
  });

  it('prices by the cost model: a heavier question costs more, a batch each call', async () => {
    const amount = async (call: Call) => BigInt(requiredOf(await send(call)).accepts[0]!.amount);
    const light = await amount(SQL_LIGHT);
    const heavy = await amount(SQL_HEAVY);
    expect(light).toBe(1000n);
    expect(heavy).toBeGreaterThan(light);
    // The figure a key's answer is charged (X-Stats-Cost) is the price in cost units.
    const keyed = await send(SQL_HEAVY, keyHeaders);
    expect(BigInt(String(keyed.headers['x-stats-cost']))).toBe(heavy);
    const batch = { ...RPC, payload: [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getProtocols', params: [] })) };
    expect(await amount(batch)).toBe(3000n);
  });
});

describe('refused payments: a 402 with the reason, nothing run, nothing paid', () => {
  /** A payment signed for requirements changed by `change`, claiming (accepted) the ones asked. */
  async function signedFor(change: (r: PaymentRequired['accepts'][number]) => void, claimAsked = true): Promise<PaymentPayload> {
    const required = requiredOf(await send(RPC));
    const asked = structuredClone(required.accepts[0]!);
    change(required.accepts[0]!);
    const payload = await http.createPaymentPayload(required);
    return claimAsked ? { ...payload, accepted: asked } : payload;
  }

  async function usageRuns(): Promise<number> {
    await ctx.services.access.usage.flush();
    const [r] = await ctx.services.wh.query<{ n: string }>('SELECT sum(requests) AS n FROM api_key_usage WHERE key_id = {k:String}', { params: { k: `x402:${chain.payer.address}` } });
    return Number(r?.n ?? 0);
  }

  async function expectRefused(payment: PaymentPayload, reason: RegExp): Promise<void> {
    const before = { payee: await chain.balance(chain.payee.address), rows: await paidRows(), runs: await usageRuns() };
    const res = await send(RPC, header(payment));
    expect(res.statusCode).toBe(402);
    expect(res.json().message).toMatch(reason);
    expect(res.headers['payment-required']).toBeTypeOf('string');
    expect({ payee: await chain.balance(chain.payee.address), rows: await paidRows(), runs: await usageRuns() }).toEqual(before);
  }

  it('underpaid: a transfer of less than the price', async () => {
    await expectRefused(await signedFor((r) => { r.amount = '1'; }), /^underpaid/);
    await expectRefused(await signedFor((r) => { r.amount = '1'; }, false), /^underpaid/);
  });

  it('wrong mint: a transfer of another token', async () => {
    const other = await chain.createMint(chain.payee, [chain.payer.address, chain.payee.address], 1_000_000_000n);
    await expectRefused(await signedFor((r) => { r.asset = other.address; }), /^wrong_mint/);
    await expectRefused(await signedFor((r) => { r.asset = other.address; }, false), /^wrong_mint/);
  });

  it('wrong recipient: a transfer to another wallet', async () => {
    await expectRefused(await signedFor((r) => { r.payTo = chain.payer.address; }), /^wrong_recipient/);
    await expectRefused(await signedFor((r) => { r.payTo = chain.payer.address; }, false), /^wrong_recipient/);
  });

  it('forged: a transaction changed after it was signed, or no payment at all', async () => {
    const payload = await signedFor(() => {});
    const tx = Buffer.from(String(payload.payload.transaction), 'base64');
    tx[tx.length - 1] = tx[tx.length - 1]! ^ 1;
    await expectRefused({ ...payload, payload: { transaction: tx.toString('base64') } }, /^invalid_payment/);
    const res = await send(RPC, { 'payment-signature': 'bm90IGEgcGF5bWVudA==' });
    expect(res.statusCode).toBe(402);
    expect(res.json().message).toMatch(/^malformed_payment/);
  });

  it('expired: a transaction whose blockhash the chain no longer knows', async () => {
    const payload = await signedFor(() => {});
    for (let i = 0; i < 3; i++) chain.svm.expireBlockhash();
    await expectRefused(payload, /^expired_payment/);
  });
});
