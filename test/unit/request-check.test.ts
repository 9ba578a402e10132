// The one check of a request (core/request-check.ts) as a caller sees it, with no door in
// front: what a door forgets to check first, the one check still refuses, in the door's names.
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { checkRequest, request } from '../../core/request-check.ts';
import { ordered, sumAtMost, valueAt } from '../../core/request-rules.ts';
import { BlockTimeRange, ProtocolName } from '../../core/vocabulary/primitives.ts';

const ACTIVE = ['jupiter_v6', 'pump_fun'];
/** GraphQL's names (api/doors/graphql/declared-fields.ts): how a declared field's refusals read there. */
const graphqlName = (path: string): string => ({ protocols: 'filters.protocols', range: 'filters.dateRange' })[path] ?? path;

const sample = request(
  Type.Object(
    {
      protocols: Type.Optional(Type.Array(ProtocolName, { minItems: 1, maxItems: 5, uniqueItems: true })),
      range: Type.Optional(BlockTimeRange),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 3 })),
    },
    { additionalProperties: false },
  ),
  'list',
);

/** The refusal's message, or undefined when the request passes. */
function refusal(run: () => unknown): { message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return { message: (err as AppError).message };
  }
}

describe('checkRequest', () => {
  it('refuses a reversed range itself, whichever door handed it over', () => {
    const r = refusal(() => checkRequest(sample, { values: { range: { gte: 10, lte: 1 } } }, ACTIVE, graphqlName));
    expect(r?.message).toBe('filters.dateRange.gte must not be later than filters.dateRange.lte (got gte 10, lte 1)');
    expect(checkRequest(sample, { values: { range: { gte: 1, lte: 1 } } }, ACTIVE).range).toEqual({ gte: 1, lte: 1 });
  });

  it('words a pattern by its rule and a list item by its index, in the door names', () => {
    const r = refusal(() => checkRequest(sample, { values: { protocols: ['jupiter_v6', 'Jupiter_V6'] } }, ACTIVE, graphqlName));
    expect(r?.message).toBe('filters.protocols[1] must be a lowercase snake_case protocol name of 1-64 characters, e.g. jupiter_v6 (got "Jupiter_V6")');
    expect(refusal(() => checkRequest(sample, { values: { protocols: ['pump_fun', 'pump_fun'] } }, ACTIVE, graphqlName))?.message).toBe(
      'filters.protocols[1] "pump_fun" is listed twice',
    );
  });

  it('quotes a number JSON cannot write as itself', () => {
    expect(refusal(() => checkRequest(sample, { values: { limit: Number.POSITIVE_INFINITY } }, ACTIVE))?.message).toMatch(/^limit .*\(got Infinity\)$/);
  });

  it('quotes a value nested past the stack by its kind (not a crash): MCP run_sql hands its arguments over unbounded', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(refusal(() => checkRequest(sample, { values: { limit: deep } }, ACTIVE))?.message).toMatch(/^limit .*\(got \[…\]\)$/);
  });

  it('refuses a scope of each protocol without its list (not a crash)', () => {
    const each = request(Type.Object({ protocols: Type.Optional(Type.Array(ProtocolName)) }, { additionalProperties: false }), 'each');
    expect(refusal(() => checkRequest(each, { values: {} }, ACTIVE, graphqlName))?.message).toBe('filters.protocols is required');
  });
});

describe('the rules fail closed', () => {
  it('sumAtMost refuses a sum that is not a number', () => {
    const rule = sumAtMost('offset', 'limit', 10, 'ask for fewer');
    expect(refusal(() => rule.check({ offset: 'x', limit: 1 }))?.message).toBe('offset + limit must be at most 10 (got NaN); ask for fewer');
    expect(refusal(() => rule.check({ offset: 9, limit: 1 }))).toBeUndefined();
  });

  it('ordered refuses values that do not compare', () => {
    expect(refusal(() => ordered('from', 'to').check({ from: Number.NaN, to: 1 }))?.message).toBe('from (NaN) is after to (1)');
    expect(refusal(() => ordered('from', 'to').check({ from: 1, to: 1 }))).toBeUndefined();
  });

  it('a dotted name reads own values only, never a prototype', () => {
    expect(valueAt({ range: {} }, 'range.constructor')).toBeUndefined();
    expect(valueAt({}, 'constructor')).toBeUndefined();
    expect(valueAt({ 'a.b': 1 }, 'a.b')).toBe(1);
    expect(valueAt({ a: { b: 2 } }, 'a.b')).toBe(2);
  });
});
