// The x402 plan on the doors whose work outlives the call (issue 39): SQL executions and export
// jobs. Each call is its own payment: starting the work, every poll, every page and file. Paid,
// each answers what a key of the x402 plan is answered (the payer owns what it started); the
// payee is paid each price, once. Every refused payment (underpaid, wrong mint, wrong
// recipient, forged, expired, replayed) on every HTTP door is a 402 with its reason, and
// nothing runs (the payer's usage shows no request, no payment is recorded, nothing is paid).
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startX402App, type Call, type X402App } from '../support/x402-app.ts';

let t: X402App;
beforeAll(async () => {
  t = await startX402App();
});
afterAll(async () => t?.cleanup());

/** Unpaid (402 with its price), then paid with a payment signed for it: the paid answer and the price. */
async function paid(call: Call): Promise<{ res: LightMyRequestResponse; price: bigint }> {
  const unpaid = await t.send(call);
  expect(unpaid.statusCode).toBe(402);
  const price = BigInt(t.requiredOf(unpaid).accepts[0]!.amount);
  const before = await t.chain.balance(t.chain.payee.address);
  const res = await t.send(call, t.header(await t.signed(unpaid)));
  expect(res.statusCode).toBeLessThan(400);
  expect(t.http.getPaymentSettleResponse((n) => res.headers[n.toLowerCase()] as string | undefined)).toMatchObject({ success: true });
  expect(await t.chain.balance(t.chain.payee.address)).toBe(before + price);
  return { res, price };
}

const tick = () => new Promise((r) => setTimeout(r, 25));
const TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED'];

/** Poll `url` (paid each time, or with the key) until its job ends. */
async function finished(url: string, headers?: Record<string, string>): Promise<Record<string, unknown>> {
  for (;;) {
    const res = headers === undefined ? (await paid({ method: 'GET', url })).res : await t.send({ method: 'GET', url }, headers);
    const job = res.json() as Record<string, unknown>;
    if (TERMINAL.includes(String(job.state ?? job.status))) return job;
    await tick();
  }
}

const EXECUTION: Call = {
  method: 'POST',
  url: '/v1/query/executions',
  payload: { query: 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name' },
};
const SQL_EXPORT: Call = {
  method: 'POST',
  url: '/v1/query/exports',
  payload: { query: 'SELECT signature, fee FROM transactions ORDER BY signature LIMIT 50', format: 'CSV' },
};

describe('executions and exports, paid per call', () => {
  it('an execution: started, polled and paged with payments, its rows those a key gets', async () => {
    const { res: started, price } = await paid(EXECUTION);
    expect(started.statusCode).toBe(202);
    expect(price).toBeGreaterThan(1000n);
    const id = String(started.json().id);
    expect(await finished(`/v1/query/executions/${id}`)).toMatchObject({ state: 'COMPLETED' });
    const page = (await paid({ method: 'GET', url: `/v1/query/executions/${id}/results` })).res.json();

    const keyed = await t.send(EXECUTION, t.keyHeaders);
    const keyedId = String(keyed.json().id);
    await finished(`/v1/query/executions/${keyedId}`, t.keyHeaders);
    const keyedPage = (await t.send({ method: 'GET', url: `/v1/query/executions/${keyedId}/results` }, t.keyHeaders)).json();
    expect(page.data).toEqual(keyedPage.data);
    expect(page.data.length).toBeGreaterThan(0);
    // Another payer does not see it; a key does not either: it is the payer's.
    expect((await t.send({ method: 'GET', url: `/v1/query/executions/${id}` }, t.keyHeaders)).statusCode).toBe(404);
  });

  it('an export job: created, polled and downloaded with payments, its file the one a key gets', async () => {
    const { res: created } = await paid(SQL_EXPORT);
    expect(created.statusCode).toBe(202);
    const id = String(created.json().id);
    const job = await finished(`/v1/query/exports/${id}`);
    expect(job).toMatchObject({ status: 'COMPLETED', rowCount: 50 });
    const file = (job.files as { name: string }[])[0]!.name;
    const download = (await paid({ method: 'GET', url: `/v1/query/exports/${id}/files/${file}` })).res;

    const keyedId = String((await t.send(SQL_EXPORT, t.keyHeaders)).json().id);
    const keyedJob = await finished(`/v1/query/exports/${keyedId}`, t.keyHeaders);
    const keyedFile = (keyedJob.files as { name: string }[])[0]!.name;
    const keyedDownload = await t.send({ method: 'GET', url: `/v1/query/exports/${keyedId}/files/${keyedFile}` }, t.keyHeaders);
    expect(download.body).toBe(keyedDownload.body);
    expect(download.body.split('\n').filter(Boolean)).toHaveLength(51);
  });

  // Security review, x402 door, finding 17: a payer's signed links answered 403 (no key
  // `x402:<payer>` in the key store). A payer's job links its files where each download is paid.
  it("a payer's export links download, each download paid; a key's links stay signed", async () => {
    const { res: created } = await paid({ method: 'POST', url: '/v1/exports', payload: { format: 'csv' } });
    const job = await finished(`/v1/exports/${String(created.json().id)}`);
    expect(job).toMatchObject({ status: 'COMPLETED' });
    const url = String(job.downloadUrl);
    expect(url).not.toContain('sig=');
    const { res } = await paid({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.body.split('\n').filter(Boolean).length).toBeGreaterThan(1);
    // Unpaid, the same link asks for payment; nobody else's key reads it.
    expect((await t.send({ method: 'GET', url })).statusCode).toBe(402);
    expect((await t.send({ method: 'GET', url }, t.keyHeaders)).statusCode).toBe(404);
    const keyedId = String((await t.send({ method: 'POST', url: '/v1/exports', payload: { format: 'csv' } }, t.keyHeaders)).json().id);
    const keyedJob = await finished(`/v1/exports/${keyedId}`, t.keyHeaders);
    const keyedUrl = String(keyedJob.downloadUrl);
    expect(keyedUrl).toContain('sig=');
    expect((await t.send({ method: 'GET', url: keyedUrl })).statusCode).toBe(200);
  });
});

describe('an export by filters is priced by what it reads', () => {
  it('the whole store costs its rows plus the base; a day with no records the base only', async () => {
    const price = async (filters: object) =>
      BigInt(t.requiredOf(await t.send({ method: 'POST', url: '/v1/exports', payload: { format: 'CSV', filters } })).accepts[0]!.amount);
    const whole = await price({});
    expect(whole).toBeGreaterThan(2000n);
    expect(await price({ dateRange: { start: '2001-01-01', end: '2001-01-02' } })).toBe(1000n);
    const [r] = await t.ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions');
    // The estimate reads at most every stored row once.
    expect(whole).toBeLessThanOrEqual(1000n + BigInt(r!.n));
  });
});

const DOORS: [string, Call][] = [
  ['JSON-RPC', { method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } }],
  ['REST', { method: 'GET', url: '/api/v1/stats' }],
  ['SQL', { method: 'POST', url: '/v1/query', payload: { query: 'SELECT count() AS n FROM transactions' } }],
  ['GraphQL', { method: 'POST', url: '/graphql', payload: { query: '{ protocols { name } }' } }],
  ['executions', EXECUTION],
  ['exports', SQL_EXPORT],
];

describe.each(DOORS)('refused payments on %s: a 402 with the reason, nothing run, nothing paid', (_door, call) => {
  /** A payment signed for the call's requirements changed by `change`, claiming the ones asked. */
  async function signedFor(change: (r: PaymentRequired['accepts'][number]) => void): Promise<PaymentPayload> {
    const required = t.requiredOf(await t.send(call));
    const asked = structuredClone(required.accepts[0]!);
    change(required.accepts[0]!);
    return { ...(await t.http.createPaymentPayload(required)), accepted: asked };
  }

  async function expectRefused(payment: PaymentPayload, reason: RegExp): Promise<void> {
    const before = await t.ledger();
    const res = await t.send(call, t.header(payment));
    expect(res.statusCode).toBe(402);
    expect(res.json().message).toMatch(reason);
    expect(t.requiredOf(res).accepts[0]!.payTo).toBe(t.chain.payee.address);
    expect(await t.ledger()).toEqual(before);
  }

  it('underpaid', async () =>
    expectRefused(
      await signedFor((r) => {
        r.amount = '1';
      }),
      /^underpaid/,
    ));

  it('wrong mint', async () => {
    const other = await t.chain.createMint(t.chain.payee, [t.chain.payer.address, t.chain.payee.address], 1_000_000_000n);
    await expectRefused(
      await signedFor((r) => {
        r.asset = other.address;
      }),
      /^wrong_mint/,
    );
  });

  it('wrong recipient', async () =>
    expectRefused(
      await signedFor((r) => {
        r.payTo = t.chain.payer.address;
      }),
      /^wrong_recipient/,
    ));

  it('forged', async () => {
    const payload = await signedFor(() => {});
    const tx = Buffer.from(String(payload.payload.transaction), 'base64');
    tx[tx.length - 1] = tx[tx.length - 1]! ^ 1;
    await expectRefused({ ...payload, payload: { transaction: tx.toString('base64') } }, /^invalid_payment/);
  });

  it('expired', async () => {
    const payload = await signedFor(() => {});
    for (let i = 0; i < 3; i++) t.chain.svm.expireBlockhash();
    await expectRefused(payload, /^expired_payment/);
  });

  it('replayed', async () => {
    const payment = await signedFor(() => {});
    expect((await t.send(call, t.header(payment))).statusCode).toBeLessThan(400);
    await expectRefused(payment, /^replayed_payment/);
  });
});
