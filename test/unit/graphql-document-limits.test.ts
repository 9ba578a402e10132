// The GraphQL document's limits checked right after parsing (api/doors/graphql/document-limits.ts)
// and the answer cache's bounds (api/doors/graphql/answer-cache.ts): pure functions and one class,
// no engine.
import { getIntrospectionQuery, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AnswerCache } from '../../api/doors/graphql/answer-cache.ts';
import { DocumentCache, mostRepeatedName, parseDocument, selectionCount } from '../../api/doors/graphql/document-limits.ts';
import { GRAPHQL_MAX_SAME_NAME, GRAPHQL_MAX_SELECTIONS } from '../../core/limits/graphql.ts';
import { buildExecutableSchema } from '../../api/doors/graphql/schema.ts';
import { longestLoopBlock } from '../support/loop-probe.ts';

const bomb = (levels: number, spreads = 2) =>
  `{ ...F1 } ${Array.from({ length: levels - 1 }, (_, i) => `fragment F${i + 1} on Query { ${`...F${i + 2} `.repeat(spreads)}}`).join(' ')} fragment F${levels} on Query { protocols }`;

describe('selections of a document', () => {
  it('counts fields, each fragment spread as the fields it brings', () => {
    expect(selectionCount(parse('{ protocols protocolStats { protocolName totalFees } }'))).toBe(4);
    expect(selectionCount(parse('{ ...A ...A } fragment A on Query { protocols }'))).toBe(3);
    // The operation brings 2^7 fields through F1; the definitions F1..F8 count 2^7 + ... + 1 more.
    expect(selectionCount(parse(bomb(8)))).toBe(2 ** 7 + (2 ** 8 - 1));
  });

  it('stops counting past the cap, so a fragment bomb (2^59 fields) is not walked out', () => {
    expect(selectionCount(parse(bomb(60)), 1000)).toBe(1001);
  });

  it("GraphiQL's introspection query (every option) is within the limits", () => {
    const q = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    });
    expect(selectionCount(parse(q))).toBeLessThanOrEqual(GRAPHQL_MAX_SELECTIONS);
    expect(() => parseDocument(q)).not.toThrow();
    expect(mostRepeatedName(parse(q)).times).toBeLessThanOrEqual(GRAPHQL_MAX_SAME_NAME);
  });

  it('finds the name repeated most in one selection set, fragments merged in', () => {
    expect(mostRepeatedName(parse('{ a: protocols protocols { x } ...F } fragment F on Query { protocols }'))).toEqual({ name: 'protocols', times: 2 });
    expect(mostRepeatedName(parse(`{ t { ${'x '.repeat(12)}} }`))).toEqual({ name: 'x', times: 12 });
  });

  it('refuses, naming the limit, before validation could spend the event loop on it', () => {
    const many = `{ ${'protocols '.repeat(1500)}}`;
    expect(() => parseDocument(many)).toThrow(`more than ${GRAPHQL_MAX_SELECTIONS} fields`);
    const conflicting = `{ ${Array.from({ length: 11 }, (_, i) => `protocolStats(filters: {protocols: ["p${i}"]}) { protocolName }`).join(' ')} }`;
    expect(() => parseDocument(conflicting)).toThrow(
      `selects "protocolStats" 11 times in one selection set (fragments included); at most ${GRAPHQL_MAX_SAME_NAME} are allowed`,
    );
    expect(() => parseDocument(bomb(30))).toThrow(/QUERY_TOO_COMPLEX|more than 1000 fields/);
  });

  it('validation that stops at graphql-js\'s error limit says so instead of "Validation aborted."', async () => {
    const doc = `{ ${Array.from({ length: 10 }, () => `__schema { types { ${Array.from({ length: 10 }, (_, j) => `fields(includeDeprecated: ${j % 2 === 0}) { name }`).join(' ')} } }`).join(' ')} }`;
    const cache = new DocumentCache();
    const { result: errors, maxBlockMs } = await longestLoopBlock(async () =>
      cache.validate(buildExecutableSchema(), cache.parse(doc), (await import('graphql')).specifiedRules),
    );
    expect(errors.at(-1)?.message).toMatch(/^validation stopped after the 100 errors above/);
    expect(errors.map((e) => e.message).join('\n')).not.toMatch(/Validation aborted/);
    console.info(`validation stopped at its error limit: longest event-loop block ${maxBlockMs.toFixed(0)} ms`);
  });
});

describe('the answer cache', () => {
  const entry = (bytes: number, at = 0) => ({ version: 'v', at, fields: 1, requested: 1, data: Buffer.alloc(bytes) });

  it('is bounded by bytes: the oldest answers go first, an answer larger than the whole memo is not kept', () => {
    const memo = new AnswerCache({ budgetBytes: 10_000, ttlMs: 60_000, now: () => 0 });
    for (let i = 0; i < 10; i++) memo.set(`k${i}`, entry(3_000));
    expect(memo.bytes).toBeLessThanOrEqual(10_000);
    expect(memo.size).toBe(3);
    expect(memo.get('k9', 'v')).toBeDefined();
    expect(memo.get('k0', 'v')).toBeUndefined();
    memo.set('huge', entry(20_000));
    expect(memo.get('huge', 'v')).toBeUndefined();
    memo.close();
  });

  it('drops expired answers on a timer, without waiting for a read, and stops the timer on close', async () => {
    let now = 0;
    const memo = new AnswerCache({ budgetBytes: 1_000_000, ttlMs: 40, now: () => now });
    memo.set('a', entry(1000, 0));
    memo.set('b', entry(1000, 0));
    expect(memo.size).toBe(2);
    now = 50;
    await new Promise((r) => setTimeout(r, 80));
    expect(memo.size).toBe(0);
    expect(memo.bytes).toBe(0);
    memo.close();
  });

  it('answers only the same data version', () => {
    const memo = new AnswerCache({ now: () => 0 });
    memo.set('a', entry(10));
    expect(memo.get('a', 'other')).toBeUndefined();
    expect(memo.size).toBe(0);
    memo.close();
  });
});
