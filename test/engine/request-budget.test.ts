// One request budget at one choke point (core/budget.ts, warehouse/budgeted-warehouse.ts,
// api/services/access/request-budget.ts): a route that asks under its request's budget gets its
// plan's limits applied by the engine to every statement; a route that reaches the engine
// without binding one, or on an open path (no budget), is refused; an answer over its door's
// byte budget never leaves, even from a door that forgot its own check.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { open } from '../../api/services/access/route-policy.ts';
import { Budget, tightened } from '../../core/budget.ts';
import { ANSWER_BUDGET_BYTES, DOOR_WALL_MS } from '../../core/limits/answers.ts';
import { REQUEST_DEADLINE_GRACE_MS } from '../../core/limits/http.ts';
import { PLAN_MEMORY_BYTES, PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { BudgetedWarehouse, operatorBudget } from '../../warehouse/budgeted-warehouse.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { PlanAnswerMemory } from '../../api/services/access/answer-memory.ts';
import { captureLog } from '../support/log-capture.ts';
import { startApp } from '../support/services.ts';

/** The real setTimeout, for waits while the clock is faked. */
const realSetTimeout = setTimeout;

describe('the budget, as figures', () => {
  it('derives every figure from the plan and the door', () => {
    const free = new Budget('free', 'graphql', 0);
    expect(free.readRows).toBe(PLAN_QUERY_BUDGET.free);
    expect(free.answerBytes).toBe(ANSWER_BUDGET_BYTES.graphql);
    expect(free.engineSettings(true, 0)).toMatchObject({
      max_rows_to_read: PLAN_QUERY_BUDGET.free,
      max_memory_usage: PLAN_MEMORY_BYTES.free,
      max_result_bytes: ANSWER_BUDGET_BYTES.graphql,
      max_execution_time: 30,
    });
    // Files are not answers: no result-bytes limit on an export's statements.
    expect(new Budget('free', 'export', 0).engineSettings(false, 0)).not.toHaveProperty('max_result_bytes');
  });

  it("never loosens a statement's own tighter limit, and a statement cannot lift one (0 means no limit)", () => {
    const budget = new Budget('free', 'sql', 0).engineSettings(true, 0);
    const out = tightened({ max_execution_time: 5, max_rows_to_read: 0, max_memory_usage: 2 ** 40, readonly: 1 }, budget);
    expect(out.max_execution_time).toBe(5);
    expect(out.max_rows_to_read).toBe(PLAN_QUERY_BUDGET.free);
    expect(out.max_memory_usage).toBe(PLAN_MEMORY_BYTES.free);
    // readonly freezes the settings after it: it stays last.
    expect(Object.keys(out).at(-1)).toBe('readonly');
  });

  it("shortens a statement to what is left of the request's wall time, and charges cost before work runs", () => {
    const b = new Budget('free', 'rest', 0);
    expect(b.engineSettings(true, 25_500).max_execution_time).toBe(5);
    b.charge(PLAN_QUERY_BUDGET.free - 10, 'the first field');
    expect(() => b.charge(11, 'the second field')).toThrow(/the second field would cost .* the free plan allows/);
    expect(b.spent).toBe(PLAN_QUERY_BUDGET.free - 10);
  });
});

describe('every route passes the budget', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  const log = captureLog('error');
  beforeAll(async () => {
    t = await startApp({}, { logger: log.logger });
    const { app, services } = t;
    // Routes a later change might add, asking a session as the doors do (services.ts).
    const probe = new BudgetedWarehouse(services.wh, 'probe');
    const limits = async (wh: BudgetedWarehouse) =>
      (
        await wh.query<Record<string, string>>(
          "SELECT toString(getSetting('max_rows_to_read')) AS rows, toString(getSetting('max_memory_usage')) AS memory, toString(getSetting('max_result_bytes')) AS answer",
        )
      )[0];
    app.get('/v1/new-door', async (req) => limits(probe.under(req.budget)));
    app.get('/v1/new-door/unbound', async () => limits(probe));
    // Declared public (no key), as the dashboard's routes are: it has no budget.
    app.get('/dashboard/new-open-route', { config: open() }, async (req) => limits(probe.under(req.budget)));
    app.get('/v1/new-door/big', async () => 'x'.repeat(ANSWER_BUDGET_BYTES.rest + 1));
    app.get('/v1/new-door/stuck', () => new Promise(() => {}));
    // An answer whose way out (its onSend) is still running when the request's deadline passes.
    app.get(
      '/v1/new-door/slow-out',
      {
        onSend: (_req, _reply, payload, done) => void setTimeout(() => done(null, payload), DOOR_WALL_MS.rest + REQUEST_DEADLINE_GRACE_MS + 1000),
      },
      async () => ({ answer: "the handler's" }),
    );
    app.get('/v1/new-door/big-stream', async (_req, reply) => {
      const chunk = Buffer.alloc(1024 * 1024, 'y');
      let n = 0;
      return reply.type('text/plain').send(
        new Readable({
          read() {
            this.push(n++ < 40 ? chunk : null);
          },
        }),
      );
    });
  });
  afterAll(async () => t?.cleanup());

  it('a new door runs every statement under the plan of the calling key, enforced by the engine', async () => {
    for (const plan of ['free', 'enterprise'] as const) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/new-door', headers: await apiKeyHeaders(t.app, plan) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ rows: String(PLAN_QUERY_BUDGET[plan]), memory: String(PLAN_MEMORY_BYTES[plan]), answer: String(ANSWER_BUDGET_BYTES.rest) });
    }
  });

  it("a door that forgets to bind its request's budget reaches nothing, even for a key", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/new-door/unbound', headers: await apiKeyHeaders(t.app, 'enterprise') });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ error: 'Internal Server Error', message: 'Internal error' });
    expect(log.text()).toMatch(/a probe statement ran without a budget/);
  });

  it('a route that reaches the engine without a budget is refused, and the log says why', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/dashboard/new-open-route' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Internal Server Error', message: 'Internal error' });
    expect(log.text()).toMatch(/a probe statement ran without a budget \(bind one with under\(\)\)/);
  });

  it("an answer over the door's byte budget never leaves, even when the door did not check it", async () => {
    const headers = await apiKeyHeaders(t.app, 'free');
    const res = await t.app.inject({ method: 'GET', url: '/v1/new-door/big', headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'Response Too Large', message: expect.stringMatching(/larger than 16 MiB/) });
    // A streamed answer is cut: the client never receives more than the budget.
    const streamed = await t.app.inject({ method: 'GET', url: '/v1/new-door/big-stream', headers }).catch(() => undefined);
    const bytes = streamed === undefined ? 0 : streamed.rawPayload.byteLength;
    expect(bytes).toBeLessThanOrEqual(ANSWER_BUDGET_BYTES.rest);
  });

  it("bounds the answer bytes a plan's requests hold at once: a JSON-RPC call past the plan's answer memory answers busy, and the bytes go back when the response ends", async () => {
    const memory = new PlanAnswerMemory({ free: 10, x402: 10, enterprise: 10 });
    t.services.access.answerMemory = memory;
    try {
      const headers = { ...(await apiKeyHeaders(t.app, 'free')), 'content-type': 'application/json' };
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'getProtocols', params: [] });
      const res = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: [call(1), call(2), call(3)] });
      const answers = res.json() as { id: number; result?: unknown; error?: { message: string; data?: unknown } }[];
      // The first answer is held (an answer larger than the whole memory still goes alone); the next ones find it full.
      expect(answers[0]).toHaveProperty('result');
      expect(answers.slice(1).map((a) => JSON.stringify(a.error?.data))).toEqual([
        expect.stringMatching(/answer memory/),
        expect.stringMatching(/answer memory/),
      ]);
      expect(memory.heldBy('free')).toBe(0);
      const again = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: call(4) });
      expect(again.json()).toHaveProperty('result');
    } finally {
      t.services.access.answerMemory = new PlanAnswerMemory();
    }
  });

  it('a request whose handler never settles is answered with the time-out a little after its wall time', async () => {
    const headers = await apiKeyHeaders(t.app, 'free');
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      const pending = t.app.inject({ method: 'GET', url: '/v1/new-door/stuck', headers });
      await vi.advanceTimersByTimeAsync(DOOR_WALL_MS.rest + REQUEST_DEADLINE_GRACE_MS + 10);
      const res = await pending;
      expect(res.statusCode).toBe(408);
      expect(res.json()).toMatchObject({ message: expect.stringMatching(/ran past its 30 s time budget/) });
    } finally {
      vi.useRealTimers();
    }
  });

  it('an answer already on its way out when the deadline passes is sent as it is: one reply, status and body agreeing', async () => {
    // Issue 35, finding 3: the deadline's time-out replaced the status of an answer the edge was
    // sending (408 with the body "Response Too Large"), and the log said "Reply was already sent".
    const headers = await apiKeyHeaders(t.app, 'free');
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      let settled = false;
      const logged = log.text().length;
      const pending = t.app.inject({ method: 'GET', url: '/v1/new-door/slow-out', headers }).finally(() => (settled = true));
      // Step the clock, letting real time pass between steps: the key's lookup and the handler
      // run on the engine first, and only then do the deadline's and the way out's timers start.
      for (let step = 0; !settled && step < 4000; step++) {
        await vi.advanceTimersByTimeAsync(500);
        await new Promise((resolve) => realSetTimeout(resolve, 5));
      }
      const res = await pending;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ answer: "the handler's" });
      expect(log.text().slice(logged)).not.toMatch(/Reply was already sent|passed its wall time unanswered/);
    } finally {
      vi.useRealTimers();
    }
  });

  it("work run under a budget of its own (an export job, for its owner's plan) gets that plan's limits, whatever started it", async () => {
    const probe = new BudgetedWarehouse(t.services.wh, 'probe', false);
    const rows = await probe
      .under(new Budget('free', 'export'))
      .query<{ rows: string; answer: string }>("SELECT toString(getSetting('max_rows_to_read')) AS rows, toString(getSetting('max_result_bytes')) AS answer");
    // Files are not answers: the plan's read budget, and no result-bytes limit from the budget.
    expect(rows[0]).toEqual({ rows: String(PLAN_QUERY_BUDGET.free), answer: '0' });
  });

  it('background work (live streams, CLIs, tests) runs under the operator budget it names, never unlimited', async () => {
    const [row] = await new BudgetedWarehouse(t.services.wh, 'probe')
      .under(operatorBudget())
      .query<{ rows: string }>("SELECT toString(getSetting('max_rows_to_read')) AS rows");
    expect(row?.rows).toBe(String(PLAN_QUERY_BUDGET.enterprise));
    // The analytics layer the doors get refuses until bound; the operator's view answers.
    await expect(t.services.analytics.protocolStats('jupiter_v6')).rejects.toThrow('Internal error');
    expect((await t.services.operatorAnalytics.protocolStats('jupiter_v6')).protocolName).toBe('jupiter_v6');
  });
});
