// The SQL surface tokenizer (no engine needed): strings, identifiers, comments and
// heredocs as ClickHouse lexes them; the outermost LIMIT; WITH names; the tree reader.
import { describe, expect, it } from 'vitest';
import { parseAstDump } from '../../api/services/sql/sql-ast.ts';
import { cteNames, lex, LexError, outerLimit } from '../../api/services/sql/sql-lexer.ts';

describe('lex', () => {
  it.each([
    ["SELECT ';'", 0],
    ["SELECT 'a\\';' AS x", 0],
    ["SELECT 'a'';'", 0],
    ['SELECT "a;b"', 0],
    ['SELECT `a;b`', 0],
    ['SELECT 1 -- ;', 0],
    ['SELECT 1 # ;', 0],
    ['SELECT 1 /* ; /* ; */ ; */', 0],
    ['SELECT $$;$$', 0],
    ['SELECT $x$ ; $x$', 0],
    ['SELECT 1; SELECT 2', 1],
    ["SELECT 'a\\\\'; SELECT 2", 1],
    ['SELECT 1 /* c */ ;', 1],
    ['SELECT 1 -- c\n;', 1],
  ])('finds the semicolons outside strings and comments in %j', (sql, n) => {
    expect(lex(sql).semicolons).toHaveLength(n);
  });

  it.each(["SELECT 'open", 'SELECT "open', 'SELECT `open', 'SELECT 1 /* open', 'SELECT 1 /* a /* b */', 'SELECT $$ open', "SELECT 'a\\"])(
    'refuses what is left open: %j',
    (sql) => {
      expect(() => lex(sql)).toThrow(LexError);
    },
  );

  it('tracks parenthesis depth and unescapes strings', () => {
    const { tokens } = lex("SELECT (1, 'it''s', `a``b`)");
    expect(tokens.map((t) => [t.type, t.text, t.depth])).toEqual([
      ['word', 'SELECT', 0],
      ['punct', '(', 0],
      ['number', '1', 1],
      ['punct', ',', 1],
      ['string', "it's", 1],
      ['punct', ',', 1],
      ['quoted', 'a`b', 1],
      ['punct', ')', 0],
    ]);
  });
});

describe('outerLimit (on canonical text)', () => {
  it.each([
    ['SELECT 1', undefined],
    ['SELECT 1 LIMIT 5', 5],
    ['SELECT 1 LIMIT 10, 20', 20],
    ['SELECT a FROM t LIMIT 2 BY a', undefined],
    ['SELECT a FROM t LIMIT 2 BY a LIMIT 7', 7],
    ['SELECT a FROM (SELECT a FROM t LIMIT 3)', undefined],
    ['SELECT a FROM t ORDER BY a ASC LIMIT 4 WITH TIES', 4],
    ["SELECT 'LIMIT 99999' AS s", undefined],
    ['SELECT 1 UNION ALL SELECT 2 LIMIT 3', 3],
  ])('%j -> %s', (sql, length) => {
    expect(outerLimit(sql).length).toBe(length);
    expect(outerLimit(sql).nonLiteral).toBe(false);
  });

  it('flags non-literal limits and a bare OFFSET', () => {
    expect(outerLimit('SELECT 1 LIMIT 10 + 1').nonLiteral).toBe(true);
    expect(outerLimit('SELECT 1 LIMIT toUInt64(5)').nonLiteral).toBe(true);
    expect(outerLimit('SELECT 1 OFFSET 5').offsetOnly).toBe(true);
  });
});

describe('cteNames', () => {
  it('lists WITH names, not aliases', () => {
    expect(cteNames('WITH a AS (SELECT 1), b AS (SELECT 2) SELECT * FROM a, b')).toEqual(['a', 'b']);
    expect(cteNames('WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r')).toEqual(['r']);
    expect(cteNames('WITH 1 AS x SELECT x')).toEqual([]);
    expect(cteNames('SELECT 1 AS a')).toEqual([]);
  });
});

describe('parseAstDump', () => {
  it('reads kinds, details, aliases and nesting', () => {
    const [root] = parseAstDump(
      [
        'SelectWithUnionQuery (children 1)',
        ' ExpressionList (children 1)',
        '  SelectQuery (children 2)',
        '   ExpressionList (children 1)',
        '    Function quantile (alias p) (children 2)',
        '   TablesInSelectQuery (children 1)',
        '    TablesInSelectQueryElement (children 1)',
        '     TableExpression (children 1)',
        '      TableIdentifier transactions (alias t)',
      ].join('\n'),
    );
    const select = root!.children[0]!.children[0]!;
    expect(select.kind).toBe('SelectQuery');
    const fn = select.children[0]!.children[0]!;
    expect([fn.kind, fn.detail, fn.alias]).toEqual(['Function', 'quantile', 'p']);
    const table = select.children[1]!.children[0]!.children[0]!.children[0]!;
    expect([table.kind, table.detail, table.alias, table.parent?.kind]).toEqual(['TableIdentifier', 'transactions', 't', 'TableExpression']);
  });
});
