// x402 over MCP (issue 39): a keyless MCP client connects and lists tools without paying; a
// tool call without a payment gets the x402 MCP transport's payment-required tool result; the
// official x402 client for Solana signs the transfer, the call is sent again with it in
// params._meta["x402/payment"], runs (through the door's one batch executor) and answers with
// the settlement in _meta["x402/payment-response"]; the payee is paid the price, once. Refused
// payments are tool errors with their reason and run nothing; a client whose HTTP transport
// pays (PAYMENT-SIGNATURE) is served too. The SDK's own client, against a listening server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidRpc, paidTool, payer } from '../../scripts/clients/x402-client.ts';
import { startX402App, type X402App } from '../support/x402-app.ts';

let t: X402App;
let base: string;
let anonymous: Client;
let keyed: Client;

async function client(headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'x402-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return c;
}

beforeAll(async () => {
  t = await startX402App();
  base = (await t.ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  anonymous = await client();
  keyed = await client(t.keyHeaders);
  STATS = ['getProtocolStats', { options: { protocolName: 'jupiter_v6' } }];
}, 120_000);
afterAll(async () => {
  await anonymous?.close();
  await keyed?.close();
  await t?.cleanup();
});

interface Result {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

const call = async (c: Client, name: string, args: Record<string, unknown>, payment?: PaymentPayload): Promise<Result> =>
  (await c.callTool({ name, arguments: args, ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }) })) as Result;

/** The PaymentRequired of a tool result, read as the transport's clients must: structuredContent, else the x402/error wrapper. */
function requiredOf(r: Result): PaymentRequired {
  expect(r.isError).toBe(true);
  const wrapped = JSON.parse(r.content[0]!.text) as { 'x402/error': { code: number; message: string; data: PaymentRequired } };
  expect(wrapped['x402/error'].code).toBe(402);
  expect(r.structuredContent).toEqual(wrapped['x402/error'].data);
  return r.structuredContent as unknown as PaymentRequired;
}

let STATS: [string, Record<string, unknown>];

describe('a keyless MCP client pays per tool call', () => {
  it('connects and lists tools without paying; tool descriptions say calls may be paid', async () => {
    const { tools } = await anonymous.listTools();
    expect(tools.length).toBeGreaterThan(10);
    expect(tools.find((x) => x.name === 'getProtocols')?.description).toMatch(/x402/);
    expect(tools.find((x) => x.name === 'run_sql')?.description).toMatch(/x402\/payment/);
  });

  it("unpaid: the requirements in a tool error; paid: the key's answer with the settlement, paid once", async () => {
    const before = await t.ledger();
    const unpaid = await call(anonymous, ...STATS);
    const required = requiredOf(unpaid);
    expect(required.x402Version).toBe(2);
    expect(required.error).toMatch(/^payment_required: .*_meta\["x402\/payment"\]/);
    expect(required.resource.url).toBe('mcp://tool/getProtocolStats');
    const [req] = required.accepts;
    expect(req).toMatchObject({
      scheme: 'exact',
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      asset: t.chain.mint.address,
      payTo: t.chain.payee.address,
    });
    // Priced as its JSON-RPC method is (the cost model's figure for the statements it runs).
    const price = BigInt(req!.amount);
    const rpc = await t.send({ method: 'POST', url: '/v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: STATS[0], params: [STATS[1].options] } });
    expect(BigInt(t.requiredOf(rpc).accepts[0]!.amount)).toBe(price);
    expect(price).toBeGreaterThan(1000n);
    // The unpaid call ran nothing and paid nothing.
    expect(await t.ledger()).toEqual(before);

    const payment = await t.http.createPaymentPayload(required);
    const paid = await call(anonymous, ...STATS, payment);
    expect(paid.isError).toBeUndefined();
    expect(JSON.parse(paid.content[0]!.text)).toEqual(JSON.parse((await call(keyed, ...STATS)).content[0]!.text));
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: req!.network, payer: t.chain.payer.address });
    expect(await t.chain.balance(t.chain.payee.address)).toBe(before.payee + price);
    expect(await t.paidRows()).toBe(before.rows + 1);
    expect(await t.usageRuns()).toBe(before.runs + 1);

    // The same payment again: a tool error naming the replay, and nothing more paid or run.
    const replay = await call(anonymous, ...STATS, payment);
    expect(requiredOf(replay).error).toMatch(/^replayed_payment/);
    expect(await t.ledger()).toEqual({ ...before, payee: before.payee + price, rows: before.rows + 1, runs: before.runs + 1 });
  });

  it('prices run_sql by the cost model: a heavier query costs more, the figure a key is charged', async () => {
    const price = async (query: string) => BigInt(requiredOf(await call(anonymous, 'run_sql', { query })).accepts[0]!.amount);
    const light = await price('SELECT 1 AS one');
    const heavy = await price('SELECT count() AS n FROM transactions');
    expect(light).toBe(1000n);
    expect(heavy).toBeGreaterThan(light);
    const keyedHeavy = await t.send({ method: 'POST', url: '/v1/query', payload: { query: 'SELECT count() AS n FROM transactions' } }, t.keyHeaders);
    expect(BigInt(String(keyedHeavy.headers['x-stats-cost']))).toBe(heavy);
  });

  it("a batch: each call pays for itself through the door's one batch executor", async () => {
    const required = requiredOf(await call(anonymous, 'getProtocols', {}));
    const [p1, p2] = [await t.http.createPaymentPayload(required), await t.http.createPaymentPayload(required)];
    const before = await t.chain.balance(t.chain.payee.address);
    const body = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getProtocols', arguments: {}, _meta: { 'x402/payment': p1 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getProtocols', arguments: {}, _meta: { 'x402/payment': p2 } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getProtocols', arguments: {} } },
      // The first payment a second time in the same POST: a replay.
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'getProtocols', arguments: {}, _meta: { 'x402/payment': p1 } } },
    ];
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { id: number; result: Result }[];
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(1)?._meta?.['x402/payment-response']).toMatchObject({ success: true });
    expect(byId.get(2)?._meta?.['x402/payment-response']).toMatchObject({ success: true });
    expect(requiredOf(byId.get(3)!).error).toMatch(/^payment_required/);
    expect(requiredOf(byId.get(4)!).error).toMatch(/^replayed_payment/);
    expect(await t.chain.balance(t.chain.payee.address)).toBe(before + 2000n);
  });

  it('a client whose HTTP transport pays: PAYMENT-SIGNATURE on the POST, PAYMENT-RESPONSE on its answer', async () => {
    const required = requiredOf(await call(anonymous, 'getProtocols', {}));
    const payment = await t.http.createPaymentPayload(required);
    const before = await t.chain.balance(t.chain.payee.address);
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...t.http.encodePaymentSignatureHeader(payment) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getProtocols', arguments: {} } }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: Result }).result.isError).toBeUndefined();
    expect(t.http.getPaymentSettleResponse((n) => res.headers.get(n))).toMatchObject({ success: true });
    expect(await t.chain.balance(t.chain.payee.address)).toBe(before + 1000n);
  });
});

describe('refused MCP payments: a tool error with the reason, nothing run, nothing paid', () => {
  async function signedFor(change: (r: PaymentRequired['accepts'][number]) => void): Promise<PaymentPayload> {
    const required = requiredOf(await call(anonymous, ...STATS));
    const asked = structuredClone(required.accepts[0]!);
    change(required.accepts[0]!);
    return { ...(await t.http.createPaymentPayload(required)), accepted: asked };
  }

  async function expectRefused(payment: PaymentPayload, reason: RegExp): Promise<void> {
    const before = await t.ledger();
    expect(requiredOf(await call(anonymous, ...STATS, payment)).error).toMatch(reason);
    expect(await t.ledger()).toEqual(before);
  }

  it('underpaid, wrong mint, wrong recipient', async () => {
    await expectRefused(
      await signedFor((r) => {
        r.amount = '1';
      }),
      /^underpaid/,
    );
    const other = await t.chain.createMint(t.chain.payee, [t.chain.payer.address, t.chain.payee.address], 1_000_000_000n);
    await expectRefused(
      await signedFor((r) => {
        r.asset = other.address;
      }),
      /^wrong_mint/,
    );
    await expectRefused(
      await signedFor((r) => {
        r.payTo = t.chain.payer.address;
      }),
      /^wrong_recipient/,
    );
  });

  it('hostile _meta values: each a payment-required tool result, never a protocol error', async () => {
    for (const bad of [
      'garbage',
      null,
      42,
      [],
      { x402Version: 2, payload: {}, accepted: { amount: '1e99' } },
      { x402Version: 2, payload: { transaction: 'AAAA' }, accepted: null },
    ]) {
      const before = await t.ledger();
      const r = (await anonymous.callTool({ name: STATS[0], arguments: STATS[1], _meta: { 'x402/payment': bad } })) as Result;
      expect(requiredOf(r).error).toMatch(/^(malformed_payment|wrong_network|underpaid)/);
      expect(await t.ledger()).toEqual(before);
    }
  });

  it('forged, malformed and expired', async () => {
    const payload = await signedFor(() => {});
    const tx = Buffer.from(String(payload.payload.transaction), 'base64');
    tx[tx.length - 1] = tx[tx.length - 1]! ^ 1;
    await expectRefused({ ...payload, payload: { transaction: tx.toString('base64') } }, /^invalid_payment/);
    await expectRefused({ x402Version: 1 } as unknown as PaymentPayload, /^malformed_payment/);
    const stale = await signedFor(() => {});
    for (let i = 0; i < 3; i++) t.chain.svm.expireBlockhash();
    await expectRefused(stale, /^expired_payment/);
  });
});

describe('the documented example client (scripts/clients/x402-client.ts)', () => {
  it('pays a JSON-RPC call over HTTP and an MCP tool call inside MCP; llms.txt says how', async () => {
    const client = payer(t.chain.payer, t.chain.rpcUrl, { network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', asset: t.chain.mint.address });
    const before = await t.chain.balance(t.chain.payee.address);
    const rpc = await paidRpc(base, client, 'getProtocols', []);
    expect(rpc).toMatchObject({ status: 200, settlement: { success: true } });
    const tool = await paidTool(base, client, 'getProtocols', {});
    expect(tool.isError).toBeUndefined();
    expect(tool._meta?.['x402/payment-response']).toMatchObject({ success: true });
    expect(await t.chain.balance(t.chain.payee.address)).toBe(before + 2000n);
    const llms = await (await fetch(`${base}/llms.txt`)).text();
    expect(llms).toContain('402 Payment Required');
    expect(llms).toContain('params._meta["x402/payment"]');
  });
});
