// The byte budget of one response (core/limits/): a JSON-RPC batch whose answers would
// pass it gets results for the head and errors for the tail (and the server does not
// build the oversized answer), a single call past it gets the error, and a REST answer
// past its budget is a 400.
import { asOperator } from '../support/operator-requests.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REST_RESPONSE_BUDGET_BYTES, RPC_RESPONSE_BUDGET_BYTES } from '../../core/limits/answers.ts';
import { restApi } from '../../api/doors/rest/rest-api.ts';
import { errorBody } from '../../api/doors/rest/rest-schemas.ts';
import { rpcRoutes } from '../../api/doors/rpc/rpc-routes.ts';
import { startApp } from '../support/services.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { RpcClient, type RpcAnswer } from '../support/rpc-client.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  // Enough records that one getTransactions {limit: 10000} answer is about 3 MB.
  await ingestDemo(ctx.services, 13_000);
});
afterAll(async () => ctx?.cleanup());

const listing = (id: number, limit: number) => ({ jsonrpc: '2.0', id, method: 'getTransactions', params: [{ limit }] });

/** The JSON-RPC interface alone (no API keys), with a small budget. */
async function smallBudgetRpc(budget: number): Promise<FastifyInstance> {
  const app = asOperator(Fastify());
  await app.register(rpcRoutes, { analytics: ctx.services.analytics, responseBudgetBytes: budget });
  return app;
}

describe('JSON-RPC', () => {
  it('a batch of 100 getTransactions {limit: 10000}: results up to the 32 MiB budget, then errors; the response stays bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    const reply = await rpc.raw(Array.from({ length: 100 }, (_, i) => listing(i, 10_000)));
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(reply.status).toBe(200);
    // The budget plus the small error objects of the tail.
    expect(Buffer.byteLength(reply.body)).toBeLessThanOrEqual(RPC_RESPONSE_BUDGET_BYTES + 100 * 400);
    const answers = reply.json as RpcAnswer<{ data: unknown[] }>[];
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const firstError = answers.findIndex((a) => a.error !== undefined);
    // The head: whole results (each about 3 MB), as many as fit.
    expect(firstError).toBeGreaterThanOrEqual(5);
    for (const a of answers.slice(0, firstError)) expect(a.result?.data).toHaveLength(10_000);
    // The tail: every call past the budget gets the budget error, none a result.
    for (const a of answers.slice(firstError)) {
      expect(a.error).toEqual({
        code: -32000,
        message: 'Server error',
        data: 'this answer would take the response past its 32 MiB budget; ask for fewer records (a smaller limit, then page with paginationToken) or send fewer calls per batch',
      });
    }
    // The 100 answers would have been over 300 MB (the review measured 329 MB and 2.3 GB more RSS).
    expect(rssGrowth).toBeLessThan(1024 * 1024 * 1024);
  });

  it('small answers after the budget is used up are refused too: answers stay in order, none skipped over', async () => {
    const app = await smallBudgetRpc(200_000);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify([listing(1, 300), listing(2, 1000), { jsonrpc: '2.0', id: 3, method: 'getProtocols' }, listing(4, 0)]),
    });
    const answers = res.json<RpcAnswer<{ data: unknown[] }>[]>();
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    expect(answers[0]!.result?.data).toHaveLength(300);
    expect(answers.slice(1).map((a) => a.error?.code)).toEqual([-32000, -32000, -32000]);
    expect(answers[1]!.error?.data).toMatch(/past its 200000 bytes budget/);
    await app.close();
  });

  it('a single call whose answer is larger than the budget gets the error; a smaller one its result', async () => {
    const app = await smallBudgetRpc(200_000);
    const send = async (limit: number) =>
      (
        await app.inject({
          method: 'POST',
          url: '/v1/rpc',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(listing(9, limit)),
        })
      ).json<RpcAnswer<{ data: unknown[] }>>();
    expect((await send(10_000)).error).toMatchObject({ code: -32000, data: expect.stringMatching(/budget/) });
    expect((await send(50)).result?.data).toHaveLength(50);
    await app.close();
  });
});

describe('REST', () => {
  async function smallBudgetRest(budget: number): Promise<FastifyInstance> {
    const app = asOperator(Fastify());
    app.addSchema(errorBody);
    await app.register(restApi, { prefix: '/api/v1', analytics: ctx.services.analytics, responseBudgetBytes: budget });
    return app;
  }

  it('an answer past the budget is a 400 {error, message} naming the budget; a smaller page is answered', async () => {
    const app = await smallBudgetRest(50_000);
    const big = await app.inject({ method: 'GET', url: '/api/v1/transactions?limit=1000' });
    expect(big.statusCode).toBe(400);
    expect(big.headers['content-type']).toMatch(/^application\/json/);
    expect(big.json()).toEqual({
      error: 'Response Too Large',
      message: 'the answer is larger than the 50000 bytes budget of one REST response; ask for less (a smaller limit, a shorter date range)',
    });
    const small = await app.inject({ method: 'GET', url: '/api/v1/transactions?limit=10' });
    expect(small.statusCode).toBe(200);
    await app.close();
  });

  it('the largest REST page fits the real budget', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/v1/transactions?limit=1000', headers: rpc.headers });
    expect(res.statusCode).toBe(200);
    expect(Buffer.byteLength(res.body)).toBeLessThan(REST_RESPONSE_BUDGET_BYTES);
  });
});
