// The open questions' arguments are their declared requests' (api/catalog/open-questions.ts):
// groupBy, metrics, sort, pagination, the record ranges, status and success are refused
// through GraphQL by the one check, in the words the door gave before, and each rule that
// refuses them shows in the field's description, in GraphQL's names, as the declaration's
// x-cross-field-rules document it.
import { describe, expect, it } from 'vitest';
import { rulesDoc } from '../../core/request-rules.ts';
import { openQuestionDoor } from '../../api/doors/graphql/question-vocabulary.ts';
import { dataOf, type GraphqlReply } from '../support/graphql-client.ts';
import { graphqlFixture, STRICT } from '../support/graphql-fixture.ts';

const { gql } = graphqlFixture(300);

function refused(r: GraphqlReply<unknown>, message: RegExp): void {
  expect(r.status, r.text.slice(0, 400)).toBe(400);
  expect(r.body.errors!.map((e) => e.extensions.code)).toEqual(['BAD_USER_INPUT']);
  expect(r.body.errors!.map((e) => e.message).join('\n')).toMatch(message);
}

const CURSOR = '"bm90IGEgY3Vyc29y"';
const PAGE = 'pageInfo { hasNextPage }';

describe('the declared rules refuse through GraphQL, in the words the door gave', () => {
  const cases: [string, string, RegExp][] = [
    [
      'a key named twice',
      `{ transactions(groupBy: [PROTOCOL, HOUR, PROTOCOL]) { ${PAGE} } }`,
      /^groupBy\[2\]: PROTOCOL is listed twice; name each value once$/,
    ],
    [
      'a key named twice in a series',
      '{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" } }, groupBy: [PROTOCOL, PROTOCOL]) { value } }',
      /^groupBy\[1\]: PROTOCOL is listed twice/,
    ],
    ['a metric named twice', `{ failedTransactions(metrics: [COUNT, SUM_FEE, COUNT]) { ${PAGE} } }`, /^metrics\[2\]: COUNT is listed twice/],
    [
      "a renamed metric's two names",
      `{ transactions(groupBy: [PROTOCOL], metrics: [AVG_ACCOUNTS_COUNT, AVG_ACCOUNTS]) { ${PAGE} } }`,
      /^metrics\[1\]: AVG_ACCOUNTS is the metric AVG_ACCOUNTS_COUNT names; name it once$/,
    ],
    ['first with last', `{ transactions(pagination: { first: 2, last: 2 }) { ${PAGE} } }`, /^pagination\.first and pagination\.last cannot be used together/],
    [
      'after with before',
      `{ failedTransactions(pagination: { after: ${CURSOR}, before: ${CURSOR} }) { ${PAGE} } }`,
      /^pagination\.after and pagination\.before cannot be used together/,
    ],
    [
      'first with before',
      `{ transactions(pagination: { first: 2, before: ${CURSOR} }) { ${PAGE} } }`,
      /^pagination\.before pages backward: use it with pagination\.last, not pagination\.first$/,
    ],
    [
      'last with after',
      `{ transactions(pagination: { last: 2, after: ${CURSOR} }) { ${PAGE} } }`,
      /^pagination\.after pages forward: use it with pagination\.first, not pagination\.last$/,
    ],
    [
      'a page past the maximum',
      `{ transactions(pagination: { last: 1001 }) { ${PAGE} } }`,
      /^pagination\.last must be between 1 and 1000 \(got 1001\); page on with pagination\.before$/,
    ],
    [
      'bounds past 2^53, compared exactly',
      `{ transactions(filters: { slotRange: { min: "18446744073709551615", max: "18446744073709551614" } }) { ${PAGE} } }`,
      /^filters\.slotRange\.min \(18446744073709551615\) is above its max \(18446744073709551614\)$/,
    ],
    [
      'a bound past its column',
      `{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" }, accountsCount: { min: 65536 } }) { value } }`,
      /^filters\.accountsCount\.min must be a whole number from 0 to 65535 \(got 65536\)$/,
    ],
    [
      'success against status',
      `{ transactions(filters: { success: true, status: FAILED }) { ${PAGE} } }`,
      /^filters\.success \(true\) contradicts filters\.status \(FAILED\)$/,
    ],
    [
      'log text with signatures in a listing',
      `{ transactions(filters: { logMessage: "swap", signatures: ["${'1'.repeat(64)}"] }) { ${PAGE} } }`,
      /^filters\.logMessage cannot be combined with filters\.signatures/,
    ],
    [
      'a group sort for records',
      `{ transactions(sort: { field: SUM_FEE }) { ${PAGE} } }`,
      /^sort\.field sorts groups by SUM_FEE; without groupBy or metrics records are sorted by DATE, SLOT/,
    ],
    [
      'a record sort for groups',
      `{ transactions(groupBy: [PROTOCOL], sort: { field: SLOT }) { ${PAGE} } }`,
      /^sort\.field SLOT sorts records; sort groups by a metric/,
    ],
    [
      'a series asked for no metric (an explicit null)',
      '{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" } }, metrics: null) { value } }',
      /^metrics must name at least one metric$/,
    ],
    [
      'a key sort not grouped by',
      `{ transactions(metrics: [COUNT], sort: { field: DATE }) { ${PAGE} } }`,
      /^sort\.field DATE sorts groups by a key they are grouped by; add it to groupBy$/,
    ],
  ];
  it.each(cases)('%s', async (_name, query, message) => refused(await gql(query, undefined, STRICT), message));

  it('answers what the rules allow: a key sort grouped by, groups by a metric, log text with signatures in groups, status and success agreeing, explicit nulls', async () => {
    const d = await dataOf(
      gql(`{ a: transactions(groupBy: [DATE], metrics: [COUNT], sort: { field: DATE, direction: ASC }) { nodes { date count } }
        b: transactions(filters: { success: false, status: FAILED, feeRange: { min: 0, max: "18446744073709551615" } }, groupBy: [PROTOCOL], sort: { field: COUNT }) { nodes { protocol count } }
        c: transactions(filters: { logMessage: "swap", signatures: ["${'1'.repeat(64)}"] }, metrics: [COUNT]) { nodes { count } }
        d: transactions(pagination: { last: 2, before: null }, sort: { field: null }) { nodes { signature } } }`),
    );
    const dates = d.a.nodes.map((n: { date: string }) => n.date);
    expect(dates).toEqual([...dates].sort());
    expect(Array.isArray(d.b.nodes) && Array.isArray(d.c.nodes)).toBe(true);
    expect(d.d.nodes).toHaveLength(2);
  });
});

describe("the rules show in each open field's description, as the declaration documents them", () => {
  const { requests } = openQuestionDoor();

  it('every rule of the declared request is in the description, in GraphQL names', async () => {
    const d = await dataOf(gql('{ __type(name: "Query") { fields { name description } } }'));
    const described = new Map<string, string>(d.__type.fields.map((f: { name: string; description: string }) => [f.name, f.description]));
    const transactions = described.get('transactions')!;
    expect(transactions).toContain('{"rule":"distinctItems","field":"groupBy"}');
    expect(transactions).toContain('{"rule":"distinctItems","field":"metrics","same":"metric"}');
    expect(transactions).toContain('{"rule":"notTogether","params":["pagination.first","pagination.last"]}');
    expect(transactions).toContain('{"rule":"ordered","params":["filters.slotRange.min","filters.slotRange.max"],"compare":"integer"}');
    expect(transactions).toContain('{"rule":"agrees","params":["filters.success","filters.status"],"means":{"SUCCEEDED":true,"FAILED":false}}');
    // One rule line per request: as many rules as the declaration holds, queryComplexity's those of transactions.
    for (const [field, of] of [
      ['transactions', 'transactions'],
      ['queryComplexity', 'transactions'],
      ['timeSeries', 'timeSeries'],
      ['failedTransactions', 'failedTransactions'],
    ] as const) {
      const line = described.get(field)!.split('\n').at(-1)!;
      expect(line.startsWith('Rules: '), field).toBe(true);
      expect(line.match(/\{"rule":/g)?.length, field).toBe(requests[of].rules.length);
    }
    expect(described.get('timeSeries')).toContain('"rule":"spanAtMost"');
  });

  it('the same rules are the x-cross-field-rules of the declared request, by its own names', () => {
    const docs = rulesDoc(requests.transactions.rules)['x-cross-field-rules']!;
    expect(docs).toContainEqual({ rule: 'notTogether', params: ['page.first', 'page.last'] });
    expect(docs).toContainEqual({ rule: 'ordered', params: ['fee.min', 'fee.max'], compare: 'integer' });
    expect(docs).toContainEqual({ rule: 'distinctItems', field: 'metrics', same: 'metric' });
    expect(rulesDoc(requests.failedTransactions.rules)['x-cross-field-rules']).toContainEqual({ rule: 'distinctItems', field: 'groupBy' });
  });
});
