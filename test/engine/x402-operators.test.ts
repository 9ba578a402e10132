// What an operator of the x402 plan meets (issue 39): a remote facilitator (the official one,
// behind its HTTP API, in this test over LiteSVM) verifies and settles every payment; the 402
// answers and payment attempts of one address are limited per minute (past it: 429); revenue
// and calls per payer are read at GET /admin/x402/payers; a facilitator that cannot be
// reached stops the start with the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceServerOf } from '../../api/services/x402/x402-server.ts';
import { ADMIN_TOKEN } from '../support/admin-token.ts';
import type { Chain } from '../support/litesvm-chain.ts';
import { FacilitatorServer } from '../support/x402-facilitator-server.ts';
import { startX402App, type Call, type X402App } from '../support/x402-app.ts';

const PER_MINUTE = 6;
let clock = Date.UTC(2030, 0, 1, 12, 0, 0);
let t: X402App;
let facilitator: FacilitatorServer;
const NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

beforeAll(async () => {
  // The facilitator settles on the service's chain: the app's chain is made first, so the
  // facilitator is started inside the app's set-up, before the service reaches it.
  t = await startX402App({
    env: { X402_REQUIREMENTS_PER_MINUTE: String(PER_MINUTE) },
    start: { now: () => clock },
    facilitator: async (chain: Chain) => {
      facilitator = await new FacilitatorServer(chain, NETWORK).start();
      return facilitator.url;
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.cleanup();
  facilitator?.close();
});

const RPC: Call = { method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } };
/** A new rate-limit window for the test's address. */
const nextMinute = () => {
  clock += 61_000;
};

describe('a remote facilitator', () => {
  it('verifies and settles the payment over its HTTP API; the payee is paid the price', async () => {
    nextMinute();
    expect(facilitator.calls['/supported']).toBeGreaterThan(0);
    const unpaid = await t.send(RPC);
    expect(unpaid.statusCode).toBe(402);
    const before = await t.chain.balance(t.chain.payee.address);
    const paid = await t.send(RPC, t.header(await t.signed(unpaid)));
    expect(paid.statusCode).toBe(200);
    expect(facilitator.calls).toMatchObject({ '/verify': 1, '/settle': 1 });
    expect(t.http.getPaymentSettleResponse((n) => paid.headers[n.toLowerCase()] as string | undefined)).toMatchObject({ success: true, network: NETWORK });
    expect(await t.chain.balance(t.chain.payee.address)).toBe(before + 1000n);
  });

  it('one that cannot be reached stops the start with the reason', async () => {
    const config = { ...t.ctx.services.config.x402, facilitator: { kind: 'remote' as const, url: 'http://127.0.0.1:9' } };
    await expect(resourceServerOf(config)).rejects.toThrow(
      /^x402: the facilitator cannot be reached or does not support exact payments on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/,
    );
  });
});

describe('the 402 answers of one address are limited', () => {
  it(`${PER_MINUTE} a minute, then 429 with Retry-After; keys are not held back; the next minute, 402 again`, async () => {
    nextMinute();
    for (let i = 0; i < PER_MINUTE; i++) expect((await t.send(RPC)).statusCode).toBe(402);
    const over = await t.send(RPC);
    expect(over.statusCode).toBe(429);
    expect(over.json().message).toMatch(/payment requirements and payment attempts from one address/);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // A payment attempt counts too: refused before it is looked at.
    expect((await t.send(RPC, { 'payment-signature': 'bm90IGEgcGF5bWVudA==' })).statusCode).toBe(429);
    expect((await t.send(RPC, t.keyHeaders)).statusCode).toBe(200);
    nextMinute();
    expect((await t.send(RPC)).statusCode).toBe(402);
  });

  it('each call of a batch is priced, and counts: a batch past the budget is 429 before any price', async () => {
    nextMinute();
    const batch = (n: number): Call => ({
      ...RPC,
      payload: Array.from({ length: n }, (_, id) => ({ jsonrpc: '2.0', id, method: 'getProtocols', params: [] })),
    });
    expect((await t.send(batch(PER_MINUTE))).statusCode).toBe(402);
    expect((await t.send(RPC)).statusCode).toBe(429);
    nextMinute();
    expect((await t.send(batch(PER_MINUTE + 1))).statusCode).toBe(429);
  });
});

describe('GET /admin/x402/payers', () => {
  it('revenue and calls per payer, for the operator only', async () => {
    nextMinute();
    const before = (await t.send({ method: 'GET', url: '/admin/x402/payers' }, { authorization: `Bearer ${ADMIN_TOKEN}` })).json();
    const mine = (data: { payer: string; calls: number; amount: string; lastPaidAt: string }[]) => data.find((p) => p.payer === t.chain.payer.address);
    const calls = mine(before.data)?.calls ?? 0;
    const amount = BigInt(mine(before.data)?.amount ?? '0');
    for (let i = 0; i < 2; i++) expect((await t.send(RPC, t.header(await t.signed(await t.send(RPC))))).statusCode).toBe(200);
    // Recorded off the answer's path: read once the rows are in.
    let after: { data: { payer: string; calls: number; amount: string; asset: string; lastPaidAt: string }[] };
    do after = (await t.send({ method: 'GET', url: '/admin/x402/payers' }, { authorization: `Bearer ${ADMIN_TOKEN}` })).json();
    while ((mine(after.data)?.calls ?? 0) < calls + 2);
    expect(mine(after.data)).toMatchObject({ calls: calls + 2, amount: String(amount + 2000n), asset: t.chain.mint.address });
    expect(Date.parse(mine(after.data)!.lastPaidAt)).not.toBeNaN();
    // A window that ends before any payment: none.
    const old = (await t.send({ method: 'GET', url: '/admin/x402/payers?from=2001-01-01&to=2001-01-02' }, { authorization: `Bearer ${ADMIN_TOKEN}` })).json();
    expect(old).toMatchObject({ from: '2001-01-01T00:00:00.000Z', to: '2001-01-02T00:00:00.000Z', data: [] });
    expect((await t.send({ method: 'GET', url: '/admin/x402/payers?from=yesterday' }, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(400);
    expect((await t.send({ method: 'GET', url: '/admin/x402/payers' })).statusCode).toBe(401);
  });
});
