// Joins priced by the rows they produce, before the query runs (DESIGN section 4: the
// engine's parse tree is the authority). Rows read say little about a join: two reads of
// 0.5M rows joined on `success` produce 57 billion pairs. Every join of the tree (nested,
// in CTEs, in subqueries anywhere) gets an upper bound of its output from its sides' rows
// and the key it joins on:
//  - an equality key on plain columns of both sides: each left row meets at most M_R right
//    rows, M_R being the most right rows sharing one key value (and the other way round),
//    so the output is at most min(L·M_R, R·M_L). With uniform keys that is L·R/ndv; with
//    skewed ones (90% of records succeed) it stays a bound where L·R/ndv is not;
//  - no such key (a condition on one side only, inequalities, keys that are expressions, a
//    comma or CROSS join): L·R, every row with every row;
//  - PASTE JOIN pairs rows by position: L + R;
//  - ANY, SEMI, ANTI and ASOF joins give each row of the kept side at most one row.
// A side that is a subquery is bounded by its own joins, recursively; one grouped by the
// join key holds each key value at most twice (once more for WITH TOTALS). What cannot be
// priced (an ARRAY JOIN of an expression, a CTE the tree does not name) is priced Infinity,
// and the query is refused: fail closed.
import { joinKinds, type JoinKind } from './join-kinds.ts';
import { arrayJoinFactor, hasArrayJoin, ownNodes } from './array-rows.ts';
import { walk, type AstNode } from './sql-ast.ts';
import { isKeyword, type Token } from './sql-lexer.ts';

export { joinKinds };

export interface JoinCost {
  /** Upper bound of the rows the join produces. */
  rows: number;
  /** What was joined, for the refusal message: `t1 × t2 on success`, `… (no key on both sides)`. */
  what: string;
  /**
   * In a subquery of an expression (scalar, IN, a WITH expression): the engine may run it
   * while planning, so EXPLAIN ESTIMATE itself would run the join (see priceSqlQuery).
   */
  inExpression?: boolean;
}

export interface JoinPrice {
  /** Sum of every join's output bound (Infinity: a join that could not be priced). */
  rows: number;
  joins: JoinCost[];
}

/** What the pricing needs from the engine (join-stats.ts measures it; tests can fake it). */
export interface JoinFacts {
  /** Rows the read of a published table is expected to yield (EXPLAIN ESTIMATE, capped at the table's rows). */
  sideRows(table: string): Promise<number>;
  /** Most rows of `table` sharing one value of `columns` (each a column, or one of KEY_FUNCTIONS of a column: `toStartOfHour(block_time)`). */
  keyTop(table: string, columns: readonly string[]): Promise<number>;
  /** Longest array of an array column (an ARRAY JOIN multiplies rows by it). */
  arrayLength(table: string, column: string): Promise<number>;
}

/** A FROM element as a join side: its rows, the names it is qualified by, and its key multiplicity. */
interface Side {
  rows: number;
  names: string[];
  /** Most rows of the side sharing one value of `columns` (its rows when unknown). */
  top(columns: string[]): Promise<number>;
  /** The published table when the side is one (ARRAY JOIN of its array columns). */
  table?: string;
}

/**
 * Functions of one column a join key may apply and still be priced: the statistics are
 * measured of the same function of the column (join-stats.ts renders it from this list,
 * never from the client's text).
 */
export const KEY_FUNCTIONS: ReadonlySet<string> = new Set([
  'toStartOfHour',
  'toStartOfDay',
  'toStartOfMinute',
  'toStartOfFiveMinutes',
  'toStartOfFifteenMinutes',
  'toStartOfMonth',
  'toDate',
  'toYYYYMM',
  'toYYYYMMDD',
  'toHour',
]);

const bare = (k: JoinKind): boolean => k.kind === 'COMMA' || k.kind === 'CROSS' || k.kind === 'PASTE';

/** Price every join of the guard's parse tree. `cteNames`: the names of the tree's WITH elements, in order. */
export async function priceJoins(root: AstNode, tokens: readonly Token[], cteNames: readonly string[], facts: JoinFacts): Promise<JoinPrice> {
  const nodes = [...walk(root)];
  const joinElements = nodes.filter((n) => n.kind === 'TablesInSelectQueryElement' && n.children.some((c) => c.kind === 'TableJoin'));
  const kinds = joinKinds(tokens);
  const agree =
    kinds.length === joinElements.length &&
    joinElements.every((e, i) => bare(kinds[i]!) === (e.children.find((c) => c.kind === 'TableJoin')!.children.length === 0));
  const kindOf = new Map<AstNode, JoinKind>(agree ? joinElements.map((e, i) => [e, kinds[i]!]) : []);

  // WITH name AS (…): the dump prints the element without its name; the canonical text's
  // names come in the same order. Ambiguous or unmatched: such a CTE cannot be priced.
  const withElements = nodes.filter((n) => n.kind === 'WithElement');
  const ctes = new Map<string, AstNode | undefined>();
  if (withElements.length === cteNames.length) {
    cteNames.forEach((name, i) => {
      ctes.set(name, ctes.has(name) ? undefined : withElements[i]!.children[0]?.children[0]);
    });
  } else {
    for (const name of cteNames) ctes.set(name, undefined);
  }
  // LIMIT n BY k is printed like a GROUP BY list, and WITH ROLLUP/CUBE are not printed at
  // all (they repeat key values): where the text has one, grouping proves nothing.
  const limitBy = tokens.some(
    (t, k) =>
      (isKeyword(t, 'LIMIT') && tokens.slice(k + 1).some((u) => u.depth === t.depth && isKeyword(u, 'BY'))) || isKeyword(t, 'ROLLUP') || isKeyword(t, 'CUBE'),
  );

  // Expression aliases, wherever defined: a name one of them takes (`'x' AS signature`, even
  // a quoted `a.signature`) may not stand for the column of the same name.
  const aliases = new Set(nodes.filter((n) => n.alias !== undefined && n.parent?.kind !== 'TableExpression').map((n) => n.alias!));
  const pricer = new Pricer(facts, kindOf, ctes, limitBy, aliases);
  const joins: JoinCost[] = [];
  // Only SELECTs with a join are priced here; a side's rows are worked out when a join needs them.
  const joined = new Set(joinElements.map((e) => e.parent?.parent));
  for (const n of nodes) {
    if (n.kind !== 'SelectQuery' || !joined.has(n)) continue;
    const inExpression = inExpressionSubquery(n);
    for (const j of (await pricer.chain(n)).joins) joins.push({ ...j, inExpression });
  }
  return { rows: joins.reduce((a, j) => a + j.rows, 0), joins };
}

class Pricer {
  private readonly chains = new Map<AstNode, Promise<{ rows: number; joins: JoinCost[] }>>();
  private readonly inProgress = new Set<AstNode>();
  /** SELECTs whose chain is being priced (chain() calls are awaited one at a time, so this is the current path). */
  private readonly pricing = new Set<AstNode>();

  constructor(
    private readonly facts: JoinFacts,
    private readonly kindOf: ReadonlyMap<AstNode, JoinKind>,
    private readonly ctes: ReadonlyMap<string, AstNode | undefined>,
    private readonly limitBy: boolean,
    private readonly aliases: ReadonlySet<string>,
  ) {}

  /** The FROM chain of one SELECT: its output rows and its joins (each priced once). */
  chain(select: AstNode): Promise<{ rows: number; joins: JoinCost[] }> {
    // Reached again while its own price is pending: a CTE whose body names itself (WITH
    // RECURSIVE, or CTEs naming each other). Its size has no bound, and awaiting its own
    // pending price never settled: the request hung and held a SQL session for good.
    if (this.pricing.has(select)) return Promise.resolve({ rows: Infinity, joins: [] });
    let hit = this.chains.get(select);
    if (!hit) {
      this.pricing.add(select);
      hit = this.priceChain(select).finally(() => this.pricing.delete(select));
      this.chains.set(select, hit);
    }
    return hit;
  }

  private async priceChain(select: AstNode): Promise<{ rows: number; joins: JoinCost[] }> {
    const tables = select.children.find((c) => c.kind === 'TablesInSelectQuery');
    if (!tables) return { rows: 1, joins: [] };
    const joins: JoinCost[] = [];
    let acc: Side | undefined;
    let names: string[] = [];
    for (const element of tables.children) {
      const arrayJoin = element.children.find((c) => c.kind === 'ArrayJoin');
      if (arrayJoin) {
        if (!acc) return { rows: Infinity, joins };
        const factor = await arrayJoinFactor(arrayJoin.children[0]?.children ?? [], this.columnLength(acc));
        const rows = Number.isNaN(acc.rows * factor) ? Infinity : acc.rows * factor;
        // An array's element may repeat across every row (one account in all of them): after
        // an ARRAY JOIN a key's multiplicity is unknown.
        acc = { rows, names, table: acc.table, top: async () => rows };
        continue;
      }
      const expr = element.children.find((c) => c.kind === 'TableExpression');
      if (!expr) return { rows: Infinity, joins };
      const side = await this.side(expr);
      const tableJoin = element.children.find((c) => c.kind === 'TableJoin');
      if (acc && !tableJoin) return { rows: Infinity, joins };
      if (!acc || !tableJoin) {
        acc = side;
        names = [...side.names];
        continue;
      }
      const cost = await this.join(acc, side, tableJoin, this.kindOf.get(element), names);
      joins.push(cost);
      names = [...names, ...side.names];
      const rows = cost.rows;
      acc = { rows, names, top: async () => rows };
    }
    return { rows: acc?.rows ?? 1, joins };
  }

  private async join(left: Side, right: Side, tableJoin: AstNode, kind: JoinKind | undefined, leftNames: string[]): Promise<JoinCost> {
    const L = left.rows;
    const R = right.rows;
    const label = `${leftNames.join(' × ')} × ${right.names.join('/') || 'subquery'}`;
    if (tableJoin.children.length === 0) {
      if (kind?.kind === 'PASTE') return { rows: L + R, what: `${label} (PASTE JOIN, row by row)` };
      return { rows: L * R, what: `${label} (no join condition: every row with every row)` };
    }
    const pairs = this.keyPairs(tableJoin.children[0]!, leftNames, right.names);
    let rows: number;
    let what: string;
    if (pairs.length === 0) {
      rows = L * R;
      what = `${label} (no equality between plain columns of both sides: every row with every row)`;
    } else {
      const [topL, topR] = await Promise.all([left.top(pairs.map((p) => p[0])), right.top(pairs.map((p) => p[1]))]);
      rows = Math.min(L * R, L * topR, R * topL);
      what = `${label} on ${pairs.map((p) => (p[0] === p[1] ? p[0] : `${p[0]} = ${p[1]}`)).join(', ')}`;
    }
    // Rows without a match: unknown kind, the most an outer join can add.
    const k = kind?.kind ?? 'FULL';
    rows += k === 'LEFT' ? L : k === 'RIGHT' ? R : k === 'FULL' ? L + R : 0;
    if (kind && kind.strictness !== 'ALL' && k !== 'FULL') rows = Math.min(rows, k === 'RIGHT' ? R : L);
    // 0 × Infinity (an empty side with one that cannot be priced) is no number: the worst case.
    return { rows: Number.isNaN(rows) ? Infinity : rows, what };
  }

  /** Equalities between a plain column of the left side and one of the right, from ON … AND … or USING. */
  private keyPairs(condition: AstNode, leftNames: readonly string[], rightNames: readonly string[]): [string, string][] {
    if (condition.kind === 'ExpressionList') {
      // USING (a, b): the same column on both sides.
      return condition.children.every((c) => c.kind === 'Identifier' && !c.detail.includes('.') && c.alias === undefined)
        ? condition.children.map((c) => [c.detail, c.detail])
        : [];
    }
    const conjuncts: AstNode[] = [];
    const collect = (n: AstNode): void => {
      if (n.kind === 'Function' && n.detail === 'and') n.children[0]?.children.forEach(collect);
      else conjuncts.push(n);
    };
    collect(condition);
    // A key term: `alias.column`, or one of KEY_FUNCTIONS of it (`toStartOfHour(t.block_time)`).
    const side = (node: AstNode): { side: 'L' | 'R'; column: string } | undefined => {
      const fn = node.kind === 'Function' && KEY_FUNCTIONS.has(node.detail) && node.children[0]?.children.length === 1 ? node.detail : undefined;
      const ident = fn === undefined ? node : node.children[0]!.children[0]!;
      const parts = ident.detail.split('.');
      if (ident.kind !== 'Identifier' || ident.children.length !== 0 || parts.length !== 2 || this.aliases.has(ident.detail)) return undefined;
      const [q, column] = parts as [string, string];
      const inL = leftNames.includes(q);
      const inR = rightNames.includes(q);
      if (inL === inR) return undefined;
      return { side: inL ? 'L' : 'R', column: fn === undefined ? column : `${fn}(${column})` };
    };
    const pairs: [string, string][] = [];
    for (const c of conjuncts) {
      if (c.kind !== 'Function' || c.detail !== 'equals') continue;
      const args = c.children[0]?.children ?? [];
      if (args.length !== 2) continue;
      const a = side(args[0]!);
      const b = side(args[1]!);
      if (!a || !b || a.side === b.side) continue;
      pairs.push(a.side === 'L' ? [a.column, b.column] : [b.column, a.column]);
    }
    return pairs;
  }

  /** A FROM element: a published table, a CTE, or a subquery. */
  private async side(expr: AstNode): Promise<Side> {
    const target = expr.children.find((c) => c.kind === 'TableIdentifier' || c.kind === 'Subquery');
    if (!target) return { rows: Infinity, names: [], top: async () => Infinity };
    if (target.kind === 'TableIdentifier') {
      const names = [target.alias ?? target.detail];
      if (this.ctes.has(target.detail)) {
        const body = this.ctes.get(target.detail);
        if (!body || this.inProgress.has(body)) return { rows: Infinity, names, top: async () => Infinity };
        return this.subquerySide(body, names);
      }
      const table = target.detail;
      const rows = await this.facts.sideRows(table);
      return {
        rows,
        names: target.alias === undefined ? names : [target.alias],
        table,
        top: async (cols) => Math.min(rows, await this.facts.keyTop(table, cols)),
      };
    }
    return this.subquerySide(target.children[0]!, target.alias === undefined ? [] : [target.alias]);
  }

  private async subquerySide(query: AstNode, names: string[]): Promise<Side> {
    this.inProgress.add(query);
    try {
      const rows = await this.queryRows(query);
      const selects = query.kind === 'SelectWithUnionQuery' ? (query.children[0]?.children ?? []) : [];
      const single = selects.length === 1 && selects[0]!.kind === 'SelectQuery' ? selects[0]! : undefined;
      return { rows, names, top: async (cols) => Math.min(rows, single ? await this.subqueryTop(single, cols, rows) : rows) };
    } finally {
      this.inProgress.delete(query);
    }
  }

  /** Most rows of one SELECT's output sharing a value of `cols` (its output names). */
  private async subqueryTop(select: AstNode, cols: string[], rows: number): Promise<number> {
    // Children: [WITH list,] SELECT list, FROM, …: the SELECT list is the one right before FROM.
    const tables = select.children.find((c) => c.kind === 'TablesInSelectQuery');
    const list = tables ? select.children[select.children.indexOf(tables) - 1] : undefined;
    if (!tables || list?.kind !== 'ExpressionList') return rows;
    // Output name -> source column, for plain columns only.
    const source = new Map<string, string>();
    let star = false;
    for (const item of list.children) {
      // A bare `*` only: `* REPLACE (… AS signature)` changes what a name holds.
      if (item.kind === 'Asterisk' && item.children.length === 0) star = true;
      if (item.kind === 'Identifier' && !item.detail.includes('.')) source.set(item.alias ?? item.detail, item.detail);
    }
    const mapped = cols.map((c) => {
      const m = /^(\w+)\((.*)\)$/.exec(c);
      const name = m ? m[2]! : c;
      const src = source.get(name) ?? (star ? name : undefined);
      return src === undefined ? undefined : m ? `${m[1]}(${src})` : src;
    });
    if (mapped.some((c) => c === undefined)) return rows;
    const idx = select.children.indexOf(tables);
    const after = select.children.slice(idx + 1);
    const grouped = this.limitBy ? undefined : after.find((c) => c.kind === 'ExpressionList');
    // GROUP BY plain columns all in the key: each key value once (twice with WITH TOTALS).
    if (grouped?.children.every((g) => g.kind === 'Identifier' && mapped.includes(g.detail))) return Math.min(rows, 2);
    const only = tables.children.length === 1 ? tables.children[0]!.children.find((c) => c.kind === 'TableExpression')?.children[0] : undefined;
    if (
      only?.kind === 'TableIdentifier' &&
      !this.ctes.has(only.detail) &&
      !grouped &&
      !hasArrayJoin(select) &&
      !mapped.some((c) => this.aliases.has(c!.replace(/^\w+\((.*)\)$/, '$1')))
    ) {
      return Math.min(rows, await this.facts.keyTop(only.detail, mapped as string[]));
    }
    return rows;
  }

  /** Rows a query yields at most: the sum of its UNION branches, each its FROM chain times its arrayJoin()s. */
  /** The longest array of a column of the side's table, when the side is a table. */
  private columnLength(side: Side | undefined): ((column: string) => Promise<number>) | undefined {
    const table = side?.table;
    return table === undefined ? undefined : (column) => this.facts.arrayLength(table, column);
  }

  private async queryRows(q: AstNode): Promise<number> {
    if (q.kind === 'SelectWithUnionQuery') {
      let sum = 0;
      for (const c of q.children[0]?.children ?? []) sum += await this.queryRows(c);
      return sum;
    }
    if (q.kind === 'SelectIntersectExceptQuery') {
      let sum = 0;
      for (const c of q.children) sum += await this.queryRows(c);
      return sum;
    }
    if (q.kind !== 'SelectQuery') return Infinity;
    let rows = (await this.chain(q)).rows;
    for (const f of ownNodes(q)) {
      if (f.kind === 'Function' && f.detail === 'arrayJoin') rows *= await arrayJoinFactor(f.children[0]?.children ?? [], undefined);
    }
    return Number.isNaN(rows) ? Infinity : rows;
  }
}

/** True when a subquery that is not a FROM element (a scalar or IN subquery) encloses the node. */
function inExpressionSubquery(n: AstNode): boolean {
  for (let p = n.parent; p; p = p.parent) if (p.kind === 'Subquery' && p.parent?.kind !== 'TableExpression') return true;
  return false;
}
