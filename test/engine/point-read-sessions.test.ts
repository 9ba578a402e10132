// The coalesced point reads (api/analytics/records/signature-lookup.ts) on side sessions of their own:
// batches on two sessions at once answer as one session does and as the base table says;
// every statement still runs under the asking request's budget (an unbound or spent budget
// reads nothing); keys that are not decimal UInt64s never reach a statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignatureLookup } from '../../api/analytics/records/signature-lookup.ts';
import { Budget } from '../../core/budget.ts';
import { POINT_READ_BATCHES_IN_FLIGHT } from '../../core/limits/questions.ts';
import { PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { BudgetedWarehouse } from '../../warehouse/budgeted-warehouse.ts';
import { PlanLanes } from '../../warehouse/plan-lanes.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';
import { ACTIVE_PROTOCOLS, b58, ingestDemo } from '../support/fixtures.ts';
import { LISTING_ORDER, transactionsWhere } from '../support/oracle.ts';
import { startServices } from '../support/services.ts';

let ctx: Awaited<ReturnType<typeof startServices>>;
beforeAll(async () => {
  ctx = await startServices();
  await ingestDemo(ctx, 1500);
});
afterAll(async () => ctx?.cleanup());

/** The serving warehouse, recording the options of every statement it is given. */
function recording(): { wh: Warehouse; seen: QueryOptions[] } {
  const seen: QueryOptions[] = [];
  const inner = ctx.wh;
  const wh = {
    ...inner,
    query: <T>(sql: string, o?: QueryOptions) => {
      seen.push(o ?? {});
      return inner.query<T>(sql, o);
    },
  } as Warehouse;
  return { wh, seen };
}

const wire = (x: unknown): unknown => JSON.parse(JSON.stringify(x));
const active = new Set(ACTIVE_PROTOCOLS);

describe('point reads on side sessions', () => {
  it('two batches in flight, each on a session of its own, answer as one session does and as the base table says', async () => {
    const refs = (await transactionsWhere(ctx, 'instruction_index = 0', {}, LISTING_ORDER.asc)).slice(0, 120);
    const asked = [...refs.map((r) => r.signature), b58('never-stored', 88)];
    const expected = [...refs, null];
    const one = recording();
    const two = recording();
    const got1 = await Promise.all(asked.map((s) => new SignatureLookup({ maxInFlight: 1, maxBatch: 200 }).find(one.wh, s, active)));
    const lookup2 = new SignatureLookup({ maxInFlight: 2, maxBatch: 10 });
    const got2 = await Promise.all(asked.map((s) => lookup2.find(two.wh, s, active)));
    expect(wire(got1)).toEqual(expected);
    expect(wire(got2)).toEqual(expected);
    // Both side sessions were read, and none of it on the serving session itself.
    expect(new Set(two.seen.map((o) => o.sideSession))).toEqual(new Set([0, 1]));
    // Keys asked by number: the records of those keys, whatever their protocol.
    const keyed = await lookup2.byKeys(two.wh, [
      (await ctx.wh.query<{ k: string }>('SELECT toString(cityHash64({s:String})) AS k', { params: { s: refs[0]!.signature } }))[0]!.k,
    ]);
    expect(keyed.map((r) => r.signature)).toContain(refs[0]!.signature);
  });

  it("runs every statement under the asking request's budget: unbound or spent, nothing is read", async () => {
    const [ref] = await transactionsWhere(ctx, 'instruction_index = 0', {}, LISTING_ORDER.asc);
    const rec = recording();
    const serving = new BudgetedWarehouse(rec.wh, 'analytics');
    const lookup = new SignatureLookup();
    await expect(lookup.find(serving, ref!.signature, active)).rejects.toThrow('Internal error');
    await expect(lookup.find(serving.under(null), ref!.signature, active)).rejects.toThrow('Internal error');
    const spent = new Budget('free', 'rpc', Date.now() - 3_600_000);
    await expect(lookup.find(serving.under(spent), ref!.signature, active)).rejects.toThrow(/time budget/);
    await expect(lookup.byKeys(serving.under(spent), ['1'])).rejects.toThrow(/time budget/);
    expect(rec.seen).toEqual([]);
    // Bound: answered on a side session, with the plan's limits on the statement.
    expect(wire(await lookup.find(serving.under(new Budget('free', 'rpc')), ref!.signature, active))).toEqual(ref);
    expect(rec.seen).toHaveLength(1);
    // One of the side sessions the batches in flight read on (which one is the lookup's choice).
    expect(Number.isInteger(rec.seen[0]!.sideSession)).toBe(true);
    expect(rec.seen[0]!.sideSession).toBeGreaterThanOrEqual(0);
    expect(rec.seen[0]!.sideSession).toBeLessThan(POINT_READ_BATCHES_IN_FLIGHT);
    expect(Number(rec.seen[0]!.settings?.max_rows_to_read)).toBe(PLAN_QUERY_BUDGET.free);
  });

  it('a batch led by a request whose time budget is spent fails that request alone; the others are answered under their own', async () => {
    const refs = (await transactionsWhere(ctx, 'instruction_index = 0', {}, LISTING_ORDER.asc)).slice(0, 3);
    const serving = new BudgetedWarehouse(ctx.wh, 'analytics');
    const spent = serving.under(new Budget('free', 'rpc', Date.now() - 3_600_000));
    const fresh = serving.under(new Budget('free', 'rpc'));
    const lookup = new SignatureLookup({ maxInFlight: 1, maxBatch: 50 });
    // The session busy with a first read, the next four wait and go out as one batch, led by the spent request.
    const first = lookup.find(fresh, refs[0]!.signature, active);
    const asked = [
      lookup.find(spent, refs[0]!.signature, active),
      lookup.find(fresh, refs[1]!.signature, active),
      lookup.byKeys(fresh, ['1']),
      lookup.find(fresh, refs[2]!.signature, active),
    ];
    const settled = await Promise.allSettled(asked);
    expect(wire(await first)).toEqual(refs[0]);
    expect(settled[0]!.status).toBe('rejected');
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/time budget/);
    expect(settled.slice(1).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(wire((settled[1] as PromiseFulfilledResult<unknown>).value)).toEqual(refs[1]);
    expect(wire((settled[3] as PromiseFulfilledResult<unknown>).value)).toEqual(refs[2]);
  });

  it('a batch led by a free request whose plan holds its whole share of the serving session is read at once, with the others', async () => {
    // Found by the hostile review: the side session's batch waited for its leader's plan's
    // turn on the serving session (which it does not use), and with one batch in flight every
    // plan's point reads waited behind one free key's long statement until the leader's time ran out.
    const refs = (await transactionsWhere(ctx, 'instruction_index = 0', {}, LISTING_ORDER.asc)).slice(0, 3);
    const lanes = new PlanLanes();
    const serving = new BudgetedWarehouse(ctx.wh, 'analytics', true, lanes);
    const held = (await lanes.enter('free'))!;
    try {
      const span = new Budget('free', 'rpc').deadline - Date.now();
      // Five seconds of time left: a batch that waits for the free plan's turn fails after them.
      const free = serving.under(new Budget('free', 'rpc', Date.now() - span + 5000));
      const paid = serving.under(new Budget('enterprise', 'rpc'));
      const lookup = new SignatureLookup({ maxInFlight: 1, maxBatch: 50 });
      const got = await Promise.all([
        lookup.find(free, refs[0]!.signature, active),
        lookup.find(paid, refs[1]!.signature, active),
        lookup.find(free, refs[2]!.signature, active),
      ]);
      expect(wire(got)).toEqual(refs);
      expect(lanes.stats('free')).toEqual({ inFlight: 1, waiting: 0 });
    } finally {
      held();
    }
  });

  it('a lookup whose key cannot be computed fails, never waits for good (callers check signatures first; this is the last guard)', async () => {
    const lookup = new SignatureLookup();
    await expect(lookup.find(ctx.wh, null as unknown as string, active)).rejects.toThrow();
    await expect(lookup.find(ctx.wh, 42 as unknown as string, active)).rejects.toThrow('must be a string');
    // The session came back: the next lookup is answered.
    const [ref] = await transactionsWhere(ctx, 'instruction_index = 0', {}, LISTING_ORDER.asc);
    expect(wire(await lookup.find(ctx.wh, ref!.signature, active))).toEqual(ref);
  });

  it('refuses keys that are not decimal UInt64s before any statement, and answers the rest of the batch', async () => {
    const rec = recording();
    const lookup = new SignatureLookup();
    for (const bad of ['1) OR (1=1', '0x10', '-1', ' 12', '012', '1e3', '18446744073709551616', '']) {
      await expect(lookup.byKeys(rec.wh, ['5', bad])).rejects.toThrow('not a signature key');
    }
    expect(rec.seen).toEqual([]);
    expect(await lookup.byKeys(rec.wh, ['18446744073709551615', '0'])).toEqual([]);
  });
});
