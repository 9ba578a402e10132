// The hostile corpus of the x402 door (test/fixtures/hostile-x402.json) against the real
// service on a real Solana runtime (LiteSVM): an attacker with no key sends malformed,
// forged, replayed, mispriced and fee-draining payments. Each case says what must come
// back; every case also checks that no answer is a 5xx or carries a stack trace, that a
// refused payment runs nothing (usage of the payer's x402 key) and pays nothing (balances).
import { readFileSync } from 'node:fs';
import { x402Client } from '@x402/core/client';
import { x402HTTPClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { Chain } from '../support/litesvm-chain.ts';
import { startApp } from '../support/services.ts';
import { forgePayment, moveTokens, respelled, type Forgery } from '../support/x402-forge.ts';

type Call = { method: 'GET' | 'POST'; url: string; payload?: unknown; contentType?: string };
interface Expect {
  status?: number;
  reason?: string;
  ran?: boolean;
  paid?: 'none' | 'price' | 'claimed';
  maxBytes?: number;
}
const corpus = JSON.parse(readFileSync(new URL('../fixtures/hostile-x402.json', import.meta.url), 'utf8')) as {
  doors: Record<string, Call>;
  headers: { id: string; send: { header?: string; base64Text?: string; base64Json?: unknown; nest?: number; legacy?: boolean }; expect: Expect }[];
  payloads: { id: string; set?: Record<string, unknown>; delete?: string[]; expect: Expect }[];
  transactions: { id: string; forge: Record<string, unknown>; expect: Expect }[];
  replays: {
    id: string;
    open?: string;
    scenario: string;
    first: string;
    second?: string;
    respell?: 'unpadded' | 'trailing' | 'mixed';
    copies?: number;
    expect: Expect & { answered?: number; runs?: number; feesAtMost?: number };
  }[];
  pricing: {
    id: string;
    open?: string;
    call: Call;
    expect: { units?: number; unitsOfSql?: string; times?: number; status?: number; toolError?: string; atLeastKeyedCost?: boolean; keyedRequested?: boolean };
  }[];
  limits: { id: string; perMinute?: number; maxBytes?: number; hostLength?: number; forbidden?: string[] }[];
  failures: { id: string; door: string; expect: { status: number; paid: 'none' | 'price'; replay?: string; plan?: string; limit?: string; budget?: number } }[];
};

const PER_MINUTE = corpus.limits.find((l) => l.id === 'forwarded-for-spoofing')!.perMinute!;
let chain: Chain;
let ctx: Awaited<ReturnType<typeof startApp>>;
let http: x402HTTPClient;
/** Every answer of the run, for the checks every case shares (no 5xx, no stack trace). */
const answers: LightMyRequestResponse[] = [];
/** One client address per request group, so the per-address budget of 402s is each case's own. */
let addresses = 0;
const nextAddress = (): string => `10.${(++addresses >> 8) & 255}.${addresses & 255}.1`;

beforeAll(async () => {
  chain = await new Chain().start(1_000_000_000_000n);
  ctx = await startApp({ ...chain.x402Env(), X402_REQUIREMENTS_PER_MINUTE: String(PER_MINUTE) }, { x402Chain: (feePayer) => chain.signer(feePayer) });
  await ingestDemo(ctx.services, 2000);
  http = new x402HTTPClient(
    x402Client.fromConfig({ schemes: [{ network: 'solana:*', client: new ExactSvmScheme(chain.payer, { rpcUrl: chain.rpcUrl }) }], spendControls: false }),
  );
});
afterAll(async () => {
  await ctx?.cleanup();
  chain?.close();
});

const toPayload = (call: Call): unknown => {
  if (typeof call.payload !== 'string' || !call.payload.startsWith('$batch:')) return call.payload;
  const [, door, n] = call.payload.split(':');
  const one = corpus.doors[door!]!.payload;
  return Array.from({ length: Number(n) }, (_, i) => ({ ...(one as object), id: i + 1 }));
};

async function send(call: Call, headers: Record<string, string> = {}, remoteAddress = nextAddress()): Promise<LightMyRequestResponse> {
  const payload = toPayload(call);
  const isMcp = call.url === '/mcp';
  const res = await ctx.app.inject({
    method: call.method,
    url: call.url,
    remoteAddress,
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    headers: {
      ...(payload === undefined ? {} : { 'content-type': call.contentType ?? 'application/json' }),
      ...(isMcp ? { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' } : {}),
      ...headers,
    },
  });
  answers.push(res);
  return res;
}

const requiredOf = (res: LightMyRequestResponse): PaymentRequired =>
  http.getPaymentRequiredResponse((n) => res.headers[n.toLowerCase()] as string | undefined, res.json());
/**
 * Over MCP an unpaid tool call is answered 200 with a tool error holding its requirements (x402's
 * MCP transport): the POST's requirements are the first's, for the sum of every call's price, as
 * the POST paid whole over HTTP is priced. Undefined when a call answered anything else.
 */
function mcpRequired(res: LightMyRequestResponse): PaymentRequired | undefined {
  if (res.statusCode !== 200) return undefined;
  const each = [res.json() as unknown].flat().map((m) => (m as { result?: { structuredContent?: PaymentRequired } }).result?.structuredContent);
  if (each.length === 0 || each.some((r) => r?.accepts?.[0] === undefined)) return undefined;
  const first = each[0]!;
  const amount = each.reduce((n, r) => n + BigInt(r!.accepts[0]!.amount), 0n);
  return { ...first, accepts: [{ ...first.accepts[0]!, amount: String(amount) }] };
}
const asked = async (call: Call): Promise<PaymentRequired> => {
  const res = await send(call);
  const overMcp = call.url === '/mcp' ? mcpRequired(res) : undefined;
  if (overMcp !== undefined) return overMcp;
  expect({ status: res.statusCode, body: res.statusCode === 402 ? '' : res.body.slice(0, 300) }).toEqual({ status: 402, body: '' });
  return requiredOf(res);
};
const encode = (p: PaymentPayload): Record<string, string> => http.encodePaymentSignatureHeader(p);
const signed = async (call: Call): Promise<PaymentPayload> => http.createPaymentPayload(await asked(call));

async function usageRuns(): Promise<number> {
  await ctx.services.access.usage.flush();
  const [r] = await ctx.services.wh.query<{ n: string }>('SELECT sum(requests) AS n FROM api_key_usage WHERE key_id = {k:String}', {
    params: { k: `x402:${chain.payer.address}` },
  });
  return Number(r?.n ?? 0);
}

interface Snapshot {
  payee: bigint;
  runs: number;
}
const snapshot = async (): Promise<Snapshot> => ({ payee: await chain.balance(chain.payee.address), runs: await usageRuns() });

/** Placeholders of the corpus: $price, $price*N, $price-N, $payer, $repeat:text:times. */
function resolve(v: unknown, price: bigint): unknown {
  if (typeof v !== 'string' || !v.startsWith('$')) return v;
  if (v === '$payer') return chain.payer.address;
  const rep = /^\$repeat:([^:]*):(\d+)$/.exec(v);
  if (rep) return rep[1]!.repeat(Number(rep[2]));
  const m = /^\$price(?:([*-])(\d+))?$/.exec(v);
  if (!m) throw new Error(`unknown placeholder ${v}`);
  return String(m[1] === '*' ? price * BigInt(m[2]!) : m[1] === '-' ? price - BigInt(m[2]!) : price);
}

function setPath(target: Record<string, unknown>, path: string, value: unknown, remove = false): void {
  const keys = path.split('.');
  let at = target;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  if (remove) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = value;
}

/** An answer's size on the wire, near enough: its body and its headers. */
const answerBytes = (res: LightMyRequestResponse): number =>
  res.body.length + Object.entries(res.headers).reduce((n, [k, v]) => n + k.length + String(v).length, 0);

/** The outcome a case expects, checked against the balances and usage before it. */
async function expectOutcome(res: LightMyRequestResponse, e: Expect, before: Snapshot, price: bigint, claimed = price): Promise<void> {
  if (e.status !== undefined) expect({ status: res.statusCode, body: res.body.slice(0, 300) }).toMatchObject({ status: e.status });
  if (e.reason !== undefined) {
    expect(res.json().message).toMatch(new RegExp(`^(${e.reason}):`));
    expect(res.headers['payment-required']).toBeTypeOf('string');
  }
  const after = await snapshot();
  if (e.ran !== undefined) expect(after.runs > before.runs).toBe(e.ran);
  if (e.maxBytes !== undefined) expect(answerBytes(res)).toBeLessThanOrEqual(e.maxBytes);
  if (e.paid !== undefined) expect(after.payee - before.payee).toBe(e.paid === 'none' ? 0n : e.paid === 'price' ? price : claimed);
}

const rpc = (): Call => corpus.doors.rpc!;

describe('malformed payment headers: 402 with the reason, never a 5xx', () => {
  it.each(corpus.headers.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    let header = c.send.header;
    if (c.send.base64Text !== undefined) header = Buffer.from(c.send.base64Text).toString('base64');
    if (c.send.base64Json !== undefined) header = Buffer.from(JSON.stringify(resolve(c.send.base64Json, 0n), (_k, v) => resolve(v, 0n))).toString('base64');
    if (c.send.nest !== undefined) header = Buffer.from(`{"x402Version":2,"payload":${'['.repeat(c.send.nest)}${']'.repeat(c.send.nest)}}`).toString('base64');
    const before = await snapshot();
    const res = await send(rpc(), { [c.send.legacy ? 'x-payment' : 'payment-signature']: header! });
    await expectOutcome(res, { ...c.expect, ran: false, paid: 'none' }, before, 0n);
  });
});

describe('payloads changed after signing', () => {
  it.each(corpus.payloads.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const payment = structuredClone(await signed(rpc())) as unknown as Record<string, unknown>;
    const price = BigInt((payment.accepted as PaymentRequirements).amount);
    for (const [path, value] of Object.entries(c.set ?? {})) setPath(payment, path, resolve(value, price));
    for (const path of c.delete ?? []) setPath(payment, path, undefined, true);
    const before = await snapshot();
    const res = await send(rpc(), encode(payment as unknown as PaymentPayload));
    await expectOutcome(res, c.expect, before, price);
  });
});

describe('hand-built transactions: extra instructions, fee-payer tricks, fee drains', () => {
  it.each(corpus.transactions.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const {
      accepts: [req],
    } = await asked(rpc());
    const price = BigInt(req!.amount);
    const forge = Object.fromEntries(Object.entries(c.forge).map(([k, v]) => [k, resolve(v, price)])) as Forgery;
    const payment = await forgePayment(chain, req!, forge);
    const [before, feesBefore] = [await snapshot(), chain.svm.getBalance(chain.feePayer.address) ?? 0n];
    const res = await send(rpc(), encode(payment));
    await expectOutcome(res, c.expect, before, price, BigInt(payment.accepted.amount));
    // Whatever was settled, the fee payer paid at most two signatures' base fee and a small priority fee.
    const fees = feesBefore - (chain.svm.getBalance(chain.feePayer.address) ?? 0n);
    expect(fees).toBeLessThanOrEqual(20_000n);
  });
});

/** Copies of one payment (or distinct payments over the same funds) sent at once: one may be answered and run. */
async function concurrently(c: (typeof corpus.replays)[number]): Promise<void> {
  const first = corpus.doors[c.first]!;
  const payment = await signed(first);
  const price = BigInt(payment.accepted.amount);
  const spell = (i: number): PaymentPayload => (c.respell === undefined || i === 0 ? payment : respelled(payment, i % 2 === 0 ? 'unpadded' : 'trailing'));
  const payments =
    c.scenario === 'sameFunds'
      ? [payment, ...(await Promise.all(Array.from({ length: c.copies! - 1 }, () => signed(first))))]
      : Array.from({ length: c.copies! }, (_, i) => spell(i));
  // Same funds: the payer keeps exactly one price, which every payment spends.
  const excess = c.scenario === 'sameFunds' ? (await chain.balance(chain.payer.address)) - price : 0n;
  if (excess > 0n) await moveTokens(chain, chain.payer, chain.payee.address, excess);
  try {
    const [before, feesBefore] = [await snapshot(), chain.svm.getBalance(chain.feePayer.address) ?? 0n];
    const all = await Promise.all(payments.map((p) => send(first, encode(p))));
    expect(all.filter((r) => r.statusCode === 200)).toHaveLength(c.expect.answered!);
    for (const r of all.filter((x) => x.statusCode !== 200)) {
      expect(r.statusCode).toBe(402);
      expect(r.json().message).toMatch(new RegExp(`^(${c.expect.reason}):`));
    }
    const after = await snapshot();
    expect(after.payee - before.payee).toBe(price);
    if (c.expect.runs !== undefined) expect(after.runs - before.runs).toBe(c.expect.runs);
    // What our fee payer spent: one settlement's fees, not one per payment that lost the race.
    if (c.expect.feesAtMost !== undefined)
      expect(feesBefore - (chain.svm.getBalance(chain.feePayer.address) ?? 0n)).toBeLessThanOrEqual(BigInt(c.expect.feesAtMost));
  } finally {
    if (excess > 0n) await moveTokens(chain, chain.payee, chain.payer.address, excess);
  }
}

describe('replays: one payment, one answer', () => {
  // Open findings (docs/security-review-2026-11.md) are expected to fail until fixed.
  for (const c of corpus.replays)
    (c.open === undefined ? it : it.fails)(c.id, async () => {
      const first = corpus.doors[c.first]!;
      if (c.scenario === 'concurrent' || c.scenario === 'sameFunds') return concurrently(c);
      const second = corpus.doors[c.second!]!;
      let payment = await signed(first);
      const price = BigInt(payment.accepted.amount);
      if (c.scenario === 'sequential') expect((await send(first, encode(payment))).statusCode).toBe(200);
      if (c.respell === 'unpadded' || c.respell === 'trailing') payment = respelled(payment, c.respell);
      const before = await snapshot();
      await expectOutcome(await send(second, encode(payment)), c.expect, before, price);
    });
});

describe('prices: what runs is what is priced', () => {
  const units = async (call: Call): Promise<bigint> => BigInt((await asked(call)).accepts[0]!.amount);
  let key: { key: string } | undefined;
  const keyOfPlan = async (): Promise<{ key: string }> => (key ??= await createKey(ctx.app, 'x402'));
  for (const c of corpus.pricing)
    (c.open === undefined ? it : it.fails)(c.id, async () => {
      if (c.expect.status !== undefined) {
        const res = await send(c.call);
        expect(res.statusCode).toBe(c.expect.status);
        if (c.expect.toolError !== undefined) {
          // A tool error that says why, not a price.
          expect(mcpRequired(res)).toBeUndefined();
          expect(JSON.stringify(res.json())).toMatch(new RegExp(c.expect.toolError));
        }
        return;
      }
      if (c.expect.keyedRequested) {
        // GraphQL: the price is the cost the guard plans for an x402 key's same document.
        const keyed = await send(c.call, { 'x-api-key': (await keyOfPlan()).key });
        const requested = (keyed.json() as { extensions?: { cost?: { requested?: number } } }).extensions?.cost?.requested;
        expect({ price: await units(c.call), requested, cost: keyed.headers['x-stats-cost'] }).toMatchObject({
          price: BigInt(Math.max(1000, Math.ceil(requested ?? 0))),
        });
        return;
      }
      if (c.expect.atLeastKeyedCost) {
        // The price is at least what the cost model charges an x402 key for the same call.
        const keyed = await send(c.call, { 'x-api-key': (await keyOfPlan()).key });
        const price = await units(c.call);
        expect({ price, atLeast: price >= BigInt(String(keyed.headers['x-stats-cost'])), cost: keyed.headers['x-stats-cost'] }).toMatchObject({
          atLeast: true,
        });
        return;
      }
      const expected =
        c.expect.units !== undefined
          ? BigInt(c.expect.units)
          : (await units({ method: 'POST', url: '/v1/query', payload: { query: c.expect.unitsOfSql } })) * BigInt(c.expect.times ?? 1);
      expect(await units(c.call)).toBe(expected);
    });
});

describe('failures after a valid payment, and the plan a paid call runs under', () => {
  it.each(corpus.failures.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const door = corpus.doors[c.door]!;
    const payment = await signed(door);
    const price = BigInt(payment.accepted.amount);
    const before = await snapshot();
    const res = await send(door, encode(payment));
    await expectOutcome(res, { status: c.expect.status, paid: c.expect.paid }, before, price);
    if (c.expect.budget !== undefined) expect(res.json().extensions?.cost?.budget).toBe(c.expect.budget);
    if (c.expect.plan !== undefined)
      expect({ plan: res.headers['x-ratelimit-plan'], limit: res.headers['x-ratelimit-limit'] }).toEqual({ plan: c.expect.plan, limit: c.expect.limit });
    if (c.expect.replay !== undefined) expect((await send(door, encode(payment))).json().message).toMatch(new RegExp(`^${c.expect.replay}:`));
  });
});

describe('the 402 answer itself', () => {
  it('is rate-limited per socket address: X-Forwarded-For does not reset it', async () => {
    const address = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i <= PER_MINUTE; i++) statuses.push((await send(rpc(), { 'x-forwarded-for': `198.51.100.${i}` }, address)).statusCode);
    expect(statuses.slice(0, PER_MINUTE).every((s) => s === 402)).toBe(true);
    expect(statuses[PER_MINUTE]).toBe(429);
  });

  it('is small, also for a long path', async () => {
    const max = corpus.limits.find((l) => l.id === '402-size')!.maxBytes!;
    for (const url of ['/v1/rpc', `/api/v1/transactions/${'1'.repeat(2000)}`]) {
      const res = await send({ ...rpc(), url, method: url === '/v1/rpc' ? 'POST' : 'GET', ...(url === '/v1/rpc' ? {} : { payload: undefined }) });
      expect({ status: res.statusCode, small: res.statusCode !== 402 || answerBytes(res) <= max }).toMatchObject({ small: true });
    }
  });

  it('does not carry a long Host header back (the resource URL names the host)', async () => {
    const c = corpus.limits.find((l) => l.id === '402-long-host')!;
    const res = await send(rpc(), { host: `${'h'.repeat(c.hostLength!)}.example` });
    expect({ status: res.statusCode, small: res.statusCode !== 402 || answerBytes(res) <= c.maxBytes! }).toMatchObject({ small: true });
  });

  it('no answer of the corpus was a 5xx or carried a stack trace', () => {
    const forbidden = corpus.limits.find((l) => l.id === '402-no-stack')!.forbidden!;
    expect(answers.length).toBeGreaterThan(50);
    for (const res of answers) {
      expect(res.statusCode).toBeLessThan(500);
      for (const f of forbidden) expect(res.body).not.toContain(f);
    }
  });
});
