// The x402 plan's test set-up, shared by the x402 test files: a LiteSVM chain with a USDC-like
// mint, the service with x402 on and its in-process facilitator settling on that chain (one
// atomic unit per cost unit, so a price shows the cost model's figure itself), demo records,
// a key of the x402 plan, and the official x402 client for Solana signing as the payer.
import { x402Client } from '@x402/core/client';
import { x402HTTPClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { LightMyRequestResponse } from 'fastify';
import { createKey } from './api-key.ts';
import { ingestDemo } from './fixtures.ts';
import { Chain } from './litesvm-chain.ts';
import { startApp, type StartOptions } from './services.ts';

export type Call = { method: 'GET' | 'POST'; url: string; payload?: object };

/** The settings of the x402 tests: the chain's mint and payee, the facilitator's key. */
export function x402Env(chain: Chain, more: Record<string, string> = {}): Record<string, string> {
  return { ...chain.x402Env(), ...more };
}

/** The official x402 client for Solana, signing as `chain`'s payer. */
export const payerClient = (chain: Chain): x402HTTPClient =>
  new x402HTTPClient(
    x402Client.fromConfig({ schemes: [{ network: 'solana:*', client: new ExactSvmScheme(chain.payer, { rpcUrl: chain.rpcUrl }) }], spendControls: false }),
  );

/** `facilitator`: a remote facilitator started on the chain (its URL); without, the service settles in-process. */
export async function startX402App(
  opts: { env?: Record<string, string>; records?: number; start?: StartOptions; facilitator?: (chain: Chain) => Promise<string> } = {},
) {
  const chain = await new Chain().start(1_000_000_000n);
  const remote: Record<string, string> =
    opts.facilitator === undefined ? {} : { X402_FACILITATOR_SECRET_KEY: '', X402_FACILITATOR_URL: await opts.facilitator(chain) };
  const ctx = await startApp(x402Env(chain, { ...remote, ...opts.env }), { x402Chain: (feePayer) => chain.signer(feePayer), ...opts.start });
  await ingestDemo(ctx.services, opts.records ?? 2000);
  const keyHeaders = { 'x-api-key': (await createKey(ctx.app, 'x402')).key };
  const http = payerClient(chain);

  const send = (call: Call, headers: Record<string, string> = {}) => ctx.app.inject({ ...call, headers });
  const requiredOf = (res: LightMyRequestResponse): PaymentRequired =>
    http.getPaymentRequiredResponse((n) => res.headers[n.toLowerCase()] as string | undefined, res.json());
  const signed = async (res: LightMyRequestResponse): Promise<PaymentPayload> => http.createPaymentPayload(requiredOf(res));
  const header = (p: PaymentPayload): Record<string, string> => http.encodePaymentSignatureHeader(p);

  /** Settled payments recorded. */
  async function paidRows(): Promise<number> {
    // A payment is recorded just after its answer: count once the records under way are written.
    await ctx.services.access.x402?.recorded();
    const [r] = await ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM x402_payments');
    return Number(r?.n ?? 0);
  }

  /** Requests recorded in usage for the payer (its calls that ran). */
  async function usageRuns(payer: string = chain.payer.address): Promise<number> {
    await ctx.services.access.usage.flush();
    const [r] = await ctx.services.wh.query<{ n: string }>('SELECT sum(requests) AS n FROM api_key_usage WHERE key_id = {k:String}', {
      params: { k: `x402:${payer}` },
    });
    return Number(r?.n ?? 0);
  }

  /** What a refusal must leave as it was: the payee's balance, the payments and the payer's runs. */
  const ledger = async () => ({ payee: await chain.balance(chain.payee.address), rows: await paidRows(), runs: await usageRuns() });

  return {
    chain,
    ctx,
    keyHeaders,
    http,
    send,
    requiredOf,
    signed,
    header,
    paidRows,
    usageRuns,
    ledger,
    async cleanup() {
      await ctx.cleanup();
      chain.close();
    },
  };
}

export type X402App = Awaited<ReturnType<typeof startX402App>>;

/** An answer without its statistics (elapsed time, and reads a cached answer did not repeat). */
export const answerOf = (body: string): unknown => JSON.parse(body, (k, v) => (k === 'stats' ? undefined : v));
