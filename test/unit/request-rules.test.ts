// The rules GraphQL's open questions declare (core/request-rules.ts), run on their own and
// as the declared requests hold them: a vocabulary extended by a test shows its metric in
// the request's enums, and a renamed metric's two names still count once.
import { describe, expect, it } from 'vitest';
import { MEASURES, type Measure } from '../../api/analytics/question/model.ts';
import { openQuestionDoor } from '../../api/doors/graphql/question-vocabulary.ts';
import { checkRequest } from '../../core/request-check.ts';
import { agrees, boundsInOrder, distinctItems, needsOneOf, notTogether } from '../../core/request-rules.ts';

const refusal = (run: () => void): string => {
  try {
    run();
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('rules of lists, pages and bounds', () => {
  it('distinctItems names the later item and its index; with `same`, two names of one thing', () => {
    const metric = distinctItems('metrics', { of: (m) => ({ SUM_ACCOUNTS: 'sumAccounts', SUM_ACCOUNTS_COUNT: 'sumAccounts' })[m] ?? m, what: 'metric' });
    expect(refusal(() => distinctItems('groupBy').check({ groupBy: ['PROTOCOL', 'HOUR', 'PROTOCOL'] }))).toBe(
      'groupBy.2: PROTOCOL is listed twice; name each value once',
    );
    expect(refusal(() => metric.check({ metrics: ['SUM_ACCOUNTS_COUNT', 'COUNT', 'SUM_ACCOUNTS'] }))).toBe(
      'metrics.2: SUM_ACCOUNTS is the metric SUM_ACCOUNTS_COUNT names; name it once',
    );
    expect(refusal(() => metric.check({ metrics: ['COUNT', 'SUM_ACCOUNTS'] }))).toBe('accepted');
  });

  it('notTogether words its fields as the door names them', () => {
    const rule = notTogether('page.first', 'page.before', '{page.before} pages backward: use it with {page.last}');
    const named = (p: string) => p.replace('page.', 'pagination.');
    expect(refusal(() => rule.check({ page: { first: 1, before: 'x' } }, named))).toBe('pagination.before pages backward: use it with pagination.last');
    expect(refusal(() => rule.check({ page: { last: 1, before: 'x' } }, named))).toBe('accepted');
  });

  it('boundsInOrder compares whole numbers exactly, past 2^53', () => {
    // 2^53 + 1 and 2^53 are one double: a float comparison finds them equal.
    expect(refusal(() => boundsInOrder('slot').check({ slot: { min: '9007199254740993', max: '9007199254740992' } }))).toBe(
      'slot.min (9007199254740993) is above its max (9007199254740992)',
    );
    expect(refusal(() => boundsInOrder('slot').check({ slot: { min: '9', max: '10' } }))).toBe('accepted');
  });

  it('agrees and needsOneOf', () => {
    const status = agrees('success', 'status', { SUCCEEDED: true, FAILED: false });
    expect(refusal(() => status.check({ success: true, status: 'FAILED' }))).toBe('success (true) contradicts status (FAILED)');
    expect(refusal(() => status.check({ success: true, status: 'ALL' }))).toBe('accepted');
    const sorted = needsOneOf('sort.field', 'groupBy', { DATE: ['HOUR', 'DATE'] }, { anyGiven: ['groupBy', 'metrics'] }, '{value} needs its key in {groupBy}');
    expect(refusal(() => sorted.check({ sort: { field: 'DATE' }, metrics: ['COUNT'] }))).toBe('DATE needs its key in groupBy');
    expect(refusal(() => sorted.check({ sort: { field: 'DATE' } }))).toBe('accepted');
  });
});

describe("the open questions' requests, built from a vocabulary", () => {
  const failureRate: Measure = { metric: 'A test-only rate', states: ['tx_count'], sql: 'sum(tx_count)', type: 'number' };
  const { requests } = openQuestionDoor({ ...MEASURES, failureRate });
  const check = (values: Record<string, unknown>) => refusal(() => checkRequest(requests.transactions, { values }, ['jupiter_v6']));

  it('take a measure a test adds as a metric and a sort field, and refuse what the vocabulary lacks', () => {
    const metrics = requests.transactions.schema.properties.metrics as unknown as { items: { enum: string[] } };
    expect(metrics.items.enum).toContain('FAILURE_RATE');
    expect(check({ metrics: ['FAILURE_RATE'], sort: { field: 'FAILURE_RATE' } })).toBe('accepted');
    expect(check({ metrics: ['NO_SUCH_METRIC'] })).toMatch(/^metrics\[0\] must be one of .*FAILURE_RATE/);
    expect(openQuestionDoor().requests.transactions.schema.properties.metrics).not.toMatchObject({ items: { enum: expect.arrayContaining(['FAILURE_RATE']) } });
  });

  it("count a renamed metric's two names once", () => {
    expect(check({ metrics: ['SUM_ACCOUNTS_COUNT', 'SUM_ACCOUNTS'] })).toBe('metrics.1: SUM_ACCOUNTS is the metric SUM_ACCOUNTS_COUNT names; name it once');
  });
});
