// The question model and its compiler (api/analytics/question/): adding a measure is one
// declaration, and the compiler reads it from whole hours of the smallest view that keeps
// its states plus the ragged edges of the base table, exactly. The figures are checked
// against plain SQL over the base table (the independent reference, as support/oracle.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, readRows, type Question } from '../../api/analytics/question/compile.ts';
import { MEASURES, type Measure } from '../../api/analytics/question/model.ts';
import { FIXTURE_END, FIXTURE_START, ingestDemo } from '../support/fixtures.ts';
import { startServices } from '../support/services.ts';

let s: Awaited<ReturnType<typeof startServices>>;

beforeAll(async () => {
  s = await startServices();
  await ingestDemo(s, 4000, 7);
});
afterAll(async () => s.cleanup());

/** The one declaration a new measure takes: which states it merges and how (a test-only measure). */
const failureRate: Measure = { states: ['tx_count', 'success_count'], sql: '(sum(tx_count) - sum(success_count)) / sum(tx_count) * 100', type: 'number' };
/** A derived one: a ratio of two measures, read as its inputs (no extra column) unless an answer is ordered by it. */
const feePerAccount: Measure = { of: ['sumFee', 'sumAccounts'], op: 'ratio' };
const CATALOG = { ...MEASURES, failureRate, feePerAccount };

const PROTOCOLS = ['jupiter_v6', 'pump_fun', 'whirlpool'];
const question = (range: { gte?: number; lte?: number }, extra: Partial<Question<keyof typeof CATALOG>> = {}): Question<keyof typeof CATALOG> => ({
  measures: ['failureRate', 'feePerAccount', 'count'],
  dimensions: ['protocol'],
  filters: { protocols: PROTOCOLS, range },
  ...extra,
});

/** The failure rate per protocol, by scanning the base table alone. */
async function reference(range: { gte: number; lte: number }): Promise<Map<string, { rate: number; count: number; feePerAccount: number }>> {
  const rows = await s.wh.query<{ p: string; failed: string; n: string; fees: string; accounts: string }>(
    `SELECT protocol_name AS p, countIf(NOT success) AS failed, count() AS n, sum(fee) AS fees, sum(accounts_count) AS accounts FROM transactions
     WHERE protocol_name IN {ps:Array(String)} AND block_time BETWEEN toDateTime({gte:UInt32}, 'UTC') AND toDateTime({lte:UInt32}, 'UTC')
     GROUP BY p`,
    { params: { ps: PROTOCOLS, ...range } },
  );
  return new Map(
    rows.map((r) => [r.p, { rate: (Number(r.failed) / Number(r.n)) * 100, count: Number(r.n), feePerAccount: Number(r.fees) / Number(r.accounts) }]),
  );
}

describe('a measure added by one declaration', () => {
  it('compiles to the view for whole hours plus the base table for the ragged edges, parameters bound', () => {
    const st = compile(question({ gte: FIXTURE_START + 1800 + 7, lte: FIXTURE_END - 3600 - 99 }), CATALOG)!;
    expect(st.sql).toContain('FROM protocol_hourly');
    expect(st.sql).toContain('FROM transactions');
    expect(st.sql).toContain('UNION ALL');
    expect(st.sql).toContain('(sum(tx_count) - sum(success_count)) / sum(tx_count) * 100 AS m_failureRate');
    // The derived measure is read as its inputs.
    expect(st.sql).toContain('sum(fee_sum) AS m_sumFee');
    expect(st.sql).toContain('sum(accounts_sum) AS m_sumAccounts');
    expect(st.sql).not.toContain('m_feePerAccount');
    // Only the states its measures use are read from the view.
    expect(st.sql).not.toMatch(/cu_sum|cu_digest|fee_digest|instruction_types/);
    // Values travel as parameters, never in the text.
    expect(st.sql).not.toContain('jupiter_v6');
    expect(st.params.protocols).toEqual(PROTOCOLS);
    expect(st.costShape).toEqual({ range: { gte: FIXTURE_START + 1807, lte: FIXTURE_END - 3699 }, protocolsGiven: false, percentiles: 0 });
  });

  it('reads the view alone, without the UNION wrapper, for an hour-aligned range', () => {
    const st = compile(question({ gte: FIXTURE_START + 3600, lte: FIXTURE_END - 1 }), CATALOG)!;
    expect(st.sql).toContain('FROM protocol_hourly');
    expect(st.sql).not.toContain('UNION ALL');
    expect(st.sql).not.toContain('FROM transactions');
  });

  it.each([
    ['ragged on both sides', { gte: FIXTURE_START + 1800 + 7, lte: FIXTURE_END - 3600 - 99 }],
    ['hour-aligned', { gte: FIXTURE_START + 3600, lte: FIXTURE_END - 1 }],
    ['under one hour', { gte: FIXTURE_START + 4000, lte: FIXTURE_START + 6000 }],
  ])('%s: its figures equal an independent count over the base table', async (label, range) => {
    const q = question(range);
    const st = compile(q, CATALOG)!;
    const rows = readRows(q, await s.wh.query<Record<string, unknown>>(st.sql, { params: st.params }), CATALOG);
    const want = await reference(range);
    expect(rows.map((r) => r.protocol).sort()).toEqual([...want.keys()].sort());
    expect(want.size).toBeGreaterThan(0);
    for (const r of rows) {
      const w = want.get(r.protocol!)!;
      expect(r.values.count).toBe(w.count);
      expect(r.values.failureRate).toBeCloseTo(w.rate, 9);
      expect(r.values.feePerAccount).toBe(w.feePerAccount);
    }
    // Not degenerate: over hours, some records failed (an hour may well have none).
    if (label !== 'under one hour') expect(rows.some((r) => (r.values.failureRate as number) > 0)).toBe(true);
  });

  it('sorts and pages by the new measures like any other (a derived one ordered by is written as SQL)', async () => {
    const st = compile(question({}, { order: { measure: 'failureRate', direction: 'desc' }, page: { limit: 2 } }), CATALOG)!;
    expect(st.sql).toMatch(/ORDER BY m_failureRate DESC, protocol_name DESC\s+LIMIT \{lim:UInt32\}/);
    expect(st.params.lim).toBe(2);
    const q = question({}, { order: { measure: 'feePerAccount', direction: 'asc' } });
    const by = compile(q, CATALOG)!;
    expect(by.sql).toContain('sum(fee_sum) / sum(accounts_sum) AS m_feePerAccount');
    const rows = readRows(q, await s.wh.query<Record<string, unknown>>(by.sql, { params: by.params }), CATALOG);
    const values = rows.map((r) => r.values.feePerAccount as number);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    const want = await reference({ gte: 0, lte: FIXTURE_END });
    for (const r of rows) expect(r.values.feePerAccount).toBe(want.get(r.protocol!)!.feePerAccount);
  });
});

describe('source choice', () => {
  it('takes the smallest view that keeps every dimension, state and filter, and the base table for what no view keeps', () => {
    expect(compile({ measures: ['count'], dimensions: ['instructionType'], filters: { protocols: PROTOCOLS, range: {} } })!.sql).toContain(
      'FROM instruction_hourly',
    );
    expect(compile({ measures: ['count'], dimensions: ['errorMessage'], filters: { protocols: PROTOCOLS, range: {}, status: 'failed' } })!.sql).toContain(
      'failures AS tx_count',
    );
    const records = compile({ measures: ['programs'], dimensions: ['instructionType'], filters: { protocols: PROTOCOLS, range: {} } })!;
    expect(records.sql).not.toMatch(/_hourly/);
    expect(records.sql).toContain('FROM transactions');
    expect(records.costShape.records).toBe(true);
    expect(compile({ measures: ['count'], filters: { protocols: [], range: {} } })).toBeUndefined();
  });
});
