// The join pricing on its own (api/services/sql/join-cost.ts): parse trees as the engine dumps them
// (EXPLAIN AST of ClickHouse 26.7), canonical texts as formatQuerySingleLine prints them,
// and table facts at the audit's sizes (two reads of 0.5M rows), no engine needed. And the
// engine messages a client sees, without the database's name.
import { describe, expect, it } from 'vitest';
import { SQL_JOIN_MEASUREMENTS_PER_QUERY, SQL_JOIN_STATS_TTL_MS } from '../../core/limits/sql.ts';
import { PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { joinKinds, priceJoins, type JoinFacts } from '../../api/services/sql/join-cost.ts';
import { JoinStats } from '../../api/services/sql/join-stats.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';
import { parseAstDump } from '../../api/services/sql/sql-ast.ts';
import { ENGINE_MESSAGE_MAX_CHARS, engineMessage } from '../../api/services/sql/engine-message.ts';
import { lex } from '../../api/services/sql/sql-lexer.ts';

const AUDIT_ROWS = 500_000;

/** The audit's table: 0.5M rows, 90% of them successful, about two rows per signature. */
const facts: JoinFacts = {
  sideRows: async () => AUDIT_ROWS,
  keyTop: async (_table, cols) => (cols.includes('signature') ? 2 : cols.includes('success') ? 450_000 : cols.includes('protocol_name') ? 150_000 : AUDIT_ROWS),
  arrayLength: async () => 10,
};

const SUCCESS_JOIN = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 3)
   ExpressionList (children 1)
    Function count (children 1)
     ExpressionList
   TablesInSelectQuery (children 2)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier transactions (alias t1)
    TablesInSelectQueryElement (children 2)
     TableExpression (children 1)
      TableIdentifier transactions (alias t2)
     TableJoin (children 1)
      Function equals (children 1)
       ExpressionList (children 2)
        Identifier t1.LEFT_KEY
        Identifier RIGHT_QUALIFIER.success
   Function greater (children 1)
    ExpressionList (children 2)
     Identifier t1.fee
     Literal UInt64_0
`;

const price = (dump: string, canonical: string) => priceJoins(parseAstDump(dump)[0]!, lex(canonical).tokens, [], facts);
const successJoin = (leftKey: string, rightQualifier: string) =>
  price(
    SUCCESS_JOIN.replace('LEFT_KEY', leftKey).replace('RIGHT_QUALIFIER', rightQualifier),
    `SELECT count() FROM transactions AS t1 INNER JOIN transactions AS t2 ON t1.${leftKey} = ${rightQualifier}.success WHERE t1.fee > 0`,
  );

describe('the audit at its own size (0.5M rows a side)', () => {
  it('prices ON t1.success = t2.success at the pairs it makes (~2e11), far over every plan', async () => {
    const p = await successJoin('success', 't2');
    expect(p.rows).toBe(AUDIT_ROWS * 450_000);
    expect(p.rows).toBeGreaterThan(PLAN_QUERY_BUDGET.enterprise);
    expect(p.joins[0]?.what).toBe('t1 × t2 on success');
  });

  it('prices a condition naming one side only (t1.success = t1.success) as every row with every row', async () => {
    const p = await successJoin('success', 't1');
    expect(p.rows).toBe(AUDIT_ROWS * AUDIT_ROWS);
    expect(p.joins[0]?.what).toMatch(/no equality between plain columns of both sides/);
  });

  it('prices the key that identifies rows at what it makes: two rows per signature', async () => {
    const sig = SUCCESS_JOIN.replace('LEFT_KEY', 'signature').replace('RIGHT_QUALIFIER.success', 't2.signature');
    const p = await price(sig, 'SELECT count() FROM transactions AS t1 INNER JOIN transactions AS t2 ON t1.signature = t2.signature WHERE t1.fee > 0');
    expect(p.rows).toBe(AUDIT_ROWS * 2);
    expect(p.rows).toBeLessThan(PLAN_QUERY_BUDGET.free);
  });
});

const MIXED = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 3)
   ExpressionList (children 1)
    Function count (children 1)
     ExpressionList
   TablesInSelectQuery (children 3)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      Subquery (alias a) (children 1)
       SelectWithUnionQuery (children 1)
        ExpressionList (children 1)
         SelectQuery (children 3)
          ExpressionList (children 2)
           Identifier protocol_name
           Function count (alias c) (children 1)
            ExpressionList
          TablesInSelectQuery (children 1)
           TablesInSelectQueryElement (children 1)
            TableExpression (children 1)
             TableIdentifier transactions
          ExpressionList (children 1)
           Identifier protocol_name
    TablesInSelectQueryElement (children 2)
     TableExpression (children 1)
      TableIdentifier transactions (alias b)
     TableJoin
    TablesInSelectQueryElement (children 2)
     TableExpression (children 1)
      TableIdentifier protocol_hourly (alias h)
     TableJoin
   Function in (children 1)
    ExpressionList (children 2)
     Identifier fee
     Subquery (children 1)
      SelectWithUnionQuery (children 1)
       ExpressionList (children 1)
        SelectQuery (children 2)
         ExpressionList (children 1)
          Identifier x.fee
         TablesInSelectQuery (children 2)
          TablesInSelectQueryElement (children 1)
           TableExpression (children 1)
            TableIdentifier transactions (alias x)
          TablesInSelectQueryElement (children 2)
           TableExpression (children 1)
            TableIdentifier transactions (alias y)
           TableJoin (children 1)
            Function equals (children 1)
             ExpressionList (children 2)
              Identifier x.signature
              Identifier y.signature
`;
const MIXED_TEXT =
  'SELECT count() FROM (SELECT protocol_name, count() AS c FROM transactions GROUP BY protocol_name) AS a PASTE JOIN transactions AS b, ' +
  'protocol_hourly AS h WHERE fee IN (SELECT x.fee FROM transactions AS x ANY LEFT JOIN transactions AS y ON x.signature = y.signature)';

describe('every join of the tree, each by its kind', () => {
  it('reads the kinds from the canonical text in the order of the tree', () => {
    expect(joinKinds(lex(MIXED_TEXT).tokens)).toEqual([
      { kind: 'PASTE', strictness: 'ALL' },
      { kind: 'COMMA', strictness: 'ALL' },
      { kind: 'LEFT', strictness: 'ANY' },
    ]);
    // Commas of a select list, a USING list or an ARRAY JOIN list are no joins.
    expect(joinKinds(lex('SELECT a, b FROM t AS x ARRAY JOIN p AS q, r AS s INNER JOIN u AS y USING (k, l)').tokens)).toEqual([
      { kind: 'INNER', strictness: 'ALL' },
    ]);
  });

  it('prices PASTE by the sum of its sides, a comma by the product, an ANY LEFT join in an IN-subquery by its left side', async () => {
    const p = await price(MIXED, MIXED_TEXT);
    // The grouped subquery yields at most its input's rows; the IN itself is not a join.
    expect(p.joins.map((j) => j.rows)).toEqual([AUDIT_ROWS + AUDIT_ROWS, 2 * AUDIT_ROWS * AUDIT_ROWS, AUDIT_ROWS]);
    expect(p.joins[0]?.what).toMatch(/PASTE JOIN, row by row/);
    expect(p.joins[2]?.what).toBe('x × y on signature');
  });

  it('prices every join as the costliest kind when text and tree do not agree', async () => {
    // A canonical text with one join operator fewer than the tree: kinds are not trusted.
    const p = await price(MIXED, MIXED_TEXT.replace('PASTE JOIN transactions AS b,', 'PASTE JOIN transactions AS b'));
    expect(p.joins[0]!.rows).toBe(AUDIT_ROWS * AUDIT_ROWS);
    // ANY LEFT no longer caps the output; a FULL join's unmatched rows are added.
    expect(p.joins[2]!.rows).toBe(AUDIT_ROWS * 2 + 2 * AUDIT_ROWS);
  });
});

const EMPTY_WITH_UNPRICEABLE = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Function count (children 1)
     ExpressionList
   TablesInSelectQuery (children 2)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier protocol_hourly (alias h)
    TablesInSelectQueryElement (children 2)
     TableExpression (children 1)
      Subquery (alias b) (children 1)
       SelectWithUnionQuery (children 1)
        ExpressionList (children 1)
         SelectQuery (children 2)
          ExpressionList (children 1)
           Function arrayJoin (alias x) (children 1)
            ExpressionList (children 1)
             Function range (children 1)
              ExpressionList (children 1)
               Identifier fee
          TablesInSelectQuery (children 1)
           TablesInSelectQueryElement (children 1)
            TableExpression (children 1)
             TableIdentifier transactions
     TableJoin (children 1)
      Function equals (children 1)
       ExpressionList (children 2)
        Identifier h.tx_count
        Identifier b.x
`;

describe('what cannot be priced', () => {
  it('is Infinity, also beside an empty side (0 × Infinity is no number, and no number must never pass)', async () => {
    const emptyHourly: JoinFacts = { ...facts, sideRows: async (t) => (t === 'protocol_hourly' ? 0 : AUDIT_ROWS) };
    const p = await priceJoins(
      parseAstDump(EMPTY_WITH_UNPRICEABLE)[0]!,
      lex('SELECT count() FROM protocol_hourly AS h INNER JOIN (SELECT arrayJoin(range(fee)) AS x FROM transactions) AS b ON h.tx_count = b.x').tokens,
      [],
      emptyHourly,
    );
    expect(p.rows).toBe(Infinity);
  });
});

describe('engine messages a client sees', () => {
  it('never name the database', () => {
    const err = new Error(
      'Code: 60. DB::Exception: Table default.transactions_x does not exist. Maybe you meant default.transactions?. (UNKNOWN_TABLE) (version 26.7.2.1)',
    );
    expect(engineMessage(err)).toBe('Table transactions_x does not exist. Maybe you meant transactions?. (UNKNOWN_TABLE)');
    expect(engineMessage(new Error('Code: 81. DB::Exception: While reading `default`.`transactions`: failed. (X)'))).toBe(
      'While reading `transactions`: failed. (X)',
    );
    // Another current database (server mode) is cut too; words ending in "default" are not.
    expect(engineMessage(new Error('Code: 1. DB::Exception: no column in analytics.transactions; join_default.x kept. (X)'), 'analytics')).toBe(
      'no column in transactions; join_default.x kept. (X)',
    );
  });

  it('are cut to ENGINE_MESSAGE_MAX_CHARS, keeping their head and code, however long the value the engine quotes', () => {
    // The 2026-11 review: parseDateTimeBestEffort of a 20 MB string answered a 20 MB error body.
    const quoted = '1'.repeat(20_000_000);
    const m = engineMessage(
      new Error(
        `Code: 41. DB::Exception: Cannot parse string '${quoted}' as DateTime: syntax error at position 19. (CANNOT_PARSE_DATETIME) (version 26.7.2.1)`,
      ),
    );
    expect(m.length).toBeLessThanOrEqual(ENGINE_MESSAGE_MAX_CHARS);
    expect(m).toMatch(/^Cannot parse string '1111/);
    expect(m).toMatch(/…\. \(CANNOT_PARSE_DATETIME\)$/);
    // The sandbox's settings are still cut from a long message.
    const scoped = engineMessage(
      new Error(
        `Code: 62. DB::Exception: bad ${'x'.repeat(2000)}: In scope SELECT 1 SETTINGS additional_table_filters = {'transactions': 'protocol_name IN (1)'}. (SYNTAX_ERROR)`,
      ),
    );
    expect(scoped).not.toMatch(/additional_table_filters|In scope/);
  });
});

describe('key statistics (JoinStats): measured on the engine, bounded, kept a while', () => {
  /** A table of 100M rows whose 1M-row sample shows `sample` per key set; counts the measurements. */
  function fakeEngine(sample: (params: Record<string, unknown>) => { sampled: number; values: number; top: number } | Error) {
    const calls: { sql: string; params: Record<string, unknown> }[] = [];
    const wh = {
      query: async (sql: string, o?: QueryOptions) => {
        const params = (o?.params ?? {}) as Record<string, unknown>;
        if (sql.includes('system.parts')) return [{ n: '100000000' }];
        calls.push({ sql, params });
        const r = sample(params);
        if (r instanceof Error) throw r;
        return [{ sampled: String(r.sampled), values: String(r.values), top: String(r.top) }];
      },
    } as unknown as Warehouse;
    return { wh, calls };
  }

  it("scales a repeating key's most common value to the table, keeps a mostly distinct key's count", async () => {
    const { wh, calls } = fakeEngine((p) =>
      p.c0 === 'signature'
        ? { sampled: 1e6, values: 250_000, top: 12 }
        : p.c0 === 'fee'
          ? { sampled: 1e6, values: 300_000, top: 200_000 }
          : { sampled: 1e6, values: 2, top: 900_000 },
    );
    const facts = new JoinStats().facts(wh, [{ table: 'transactions', rows: 100_000_000 }]);
    expect(await facts.keyTop('transactions', ['success'])).toBe(90_000_000);
    expect(await facts.keyTop('transactions', ['signature'])).toBe(12);
    // Many distinct fees, but one that a fifth of all records pay: scaled.
    expect(await facts.keyTop('transactions', ['fee'])).toBe(20_000_000);
    // Names are bound as identifiers, never written into the text.
    expect(calls.every((c) => !c.sql.includes('signature') && !c.sql.includes('success'))).toBe(true);
  });

  it('renders a key function from its own list, and refuses to measure anything else', async () => {
    const { wh, calls } = fakeEngine(() => ({ sampled: 1e6, values: 900, top: 5000 }));
    const facts = new JoinStats().facts(wh, []);
    expect(await facts.keyTop('transactions', ['toStartOfHour(block_time)', 'protocol_name'])).toBe(500_000);
    expect(calls[0]?.sql).toContain('toStartOfHour({c1:Identifier})');
    expect(await facts.keyTop('transactions', ['sleep(block_time)'])).toBe(100_000_000);
    expect(await facts.keyTop('transactions', ['a b'])).toBe(100_000_000);
    expect(calls).toHaveLength(1);
  });

  it('measures at most a few new keys per query, keeps them for the TTL, and keeps no failure', async () => {
    let now = 0;
    let fail = true;
    const { wh, calls } = fakeEngine(() => (fail ? new Error('engine down') : { sampled: 1e6, values: 1e6, top: 1 }));
    const stats = new JoinStats(() => now);
    const first = stats.facts(wh, []);
    expect(await first.keyTop('transactions', ['signature'])).toBe(100_000_000); // failed: the worst case
    fail = false;
    const q = stats.facts(wh, []);
    const cols = ['signature', 'slot', 'fee', 'compute_units', 'program_id'];
    const tops = [];
    for (const c of cols) tops.push(await q.keyTop('transactions', [c]));
    expect(tops.slice(0, SQL_JOIN_MEASUREMENTS_PER_QUERY)).toEqual(Array(SQL_JOIN_MEASUREMENTS_PER_QUERY).fill(1));
    expect(tops.at(-1)).toBe(100_000_000); // no measurement left for this query
    const measured = calls.length;
    expect(await stats.facts(wh, []).keyTop('transactions', ['signature'])).toBe(1);
    expect(calls).toHaveLength(measured); // kept
    now += SQL_JOIN_STATS_TTL_MS + 1;
    await stats.facts(wh, []).keyTop('transactions', ['signature']);
    expect(calls).toHaveLength(measured + 1); // measured again after the TTL
  });

  it("shares one query's measurements between its pricing passes", async () => {
    const { wh, calls } = fakeEngine(() => ({ sampled: 1e6, values: 1e6, top: 1 }));
    const stats = new JoinStats();
    const shared = JoinStats.budget();
    const [early, late] = [stats.facts(wh, [], shared), stats.facts(wh, [], shared)];
    for (const c of ['a', 'b', 'c']) await early.keyTop('transactions', [c]);
    for (const c of ['d', 'e', 'f']) await late.keyTop('transactions', [c]);
    expect(calls).toHaveLength(SQL_JOIN_MEASUREMENTS_PER_QUERY);
  });
});
