// Decide whether a client's SQL may run. Allow-lists that fail closed: the engine's own
// parser says what the query is, and every node of its parse tree must be of a kind this
// module knows and walks in full; every function must resolve to one the function policy
// allows; every table must be published (or a CTE of the query). Anything else is refused
// with 400 naming what was found.
//
// Order of checks, cheapest and safest first:
//  1. input shape (non-empty string, at most 100000 characters, no control characters);
//  2. surface (sql-lexer.ts): no semicolon outside strings/comments, nothing left open,
//     first word SELECT/WITH/(;
//  3. the engine formats the text passed as a bound *value* (formatQuerySingleLine): its
//     own lexer and parser confirm one well-formed statement without ever running it as a
//     statement, so no multi-statement trick can reach step 4;
//  4. the engine's parse tree (`EXPLAIN AST <text>`, parse only: nothing is evaluated):
//     one SELECT; node kinds, tables and functions on the allow-lists. `APPLY` transformers
//     are the one node the dump prints without its content, so they are read from the
//     canonical form of step 3, where only a function name passes (see checkApplies);
//  5. the outermost LIMIT (read from the canonical text of step 3, cross-checked against
//     the tree): at most 10000; absent -> LIMIT 1000 is appended.
// All of it runs on the sandbox's own engine session, never the serving one.
import { engineMessage } from './engine-message.ts';
import { SQL_DEFAULT_LIMIT, SQL_MAX_AST_DUMP_BYTES, SQL_MAX_LENGTH, SQL_MAX_LIMIT, SQL_PARSE_LIMITS } from '../../../core/limits/sql.ts';
import { PUBLISHED_TABLES } from '../../../warehouse/tables.ts';
import { WarehouseError, type Warehouse } from '../../../warehouse/warehouse.ts';
import type { FunctionPolicy } from './function-policy.ts';
import { parseAstDump, walk, type AstNode } from './sql-ast.ts';
import { cteNames, isKeyword, lex, outerLimit, type Token } from './sql-lexer.ts';
import { invalid, surfaceOf } from './sql-surface.ts';

// The SPEC's SQL limits live with every other limit; re-exported for the SQL modules.
export { SQL_DEFAULT_LIMIT, SQL_MAX_LENGTH, SQL_MAX_LIMIT };

/** Tables a client may read (defined with the schema); internal tables are not listed. */
export { PUBLISHED_TABLES };

/**
 * Parse-tree node kinds the walker knows, each printed by EXPLAIN AST with all of its
 * children. Any other kind (SETTINGS, query parameters, kinds a newer engine adds) is refused.
 */
const KNOWN_KINDS: ReadonlySet<string> = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'SelectQuery',
  'ExpressionList',
  'TablesInSelectQuery',
  'TablesInSelectQueryElement',
  'TableExpression',
  'TableIdentifier',
  'TableJoin',
  'ArrayJoin',
  'Subquery',
  'WithElement',
  'Identifier',
  'Literal',
  'Function',
  'OrderByElement',
  'InterpolateElement',
  'WindowDefinition',
  'WindowListElement',
  'SampleRatio',
  'Asterisk',
  'QualifiedAsterisk',
  'ColumnsRegexpMatcher',
  'QualifiedColumnsRegexpMatcher',
  'ColumnsListMatcher',
  'QualifiedColumnsListMatcher',
  'ColumnsTransformerList',
  'ColumnsExceptTransformer',
  'ColumnsReplaceTransformer',
  'ColumnsReplaceTransformer::Replacement',
  // Printed as a leaf: its content is checked from the canonical text (checkApply).
  'ColumnsApplyTransformer',
]);

/** What may stand directly in a FROM/JOIN slot: a table name, a subquery, a SAMPLE ratio. */
const TABLE_EXPRESSION_CHILDREN: ReadonlySet<string> = new Set(['TableIdentifier', 'Subquery', 'SampleRatio']);

/** `x IN name` reads a whole table by name: such an argument must be a published table or a CTE. */
const IN_FUNCTIONS = new Set(['in', 'notin', 'globalin', 'globalnotin', 'nullin', 'notnullin', 'globalnullin', 'globalnotnullin']);

export interface PreparedQuery {
  /** The text that runs: the client's text, plus `LIMIT 1000` when the outer query had none. */
  executed: string;
  injectedLimit: boolean;
  /** Published tables the query reads (CTE names excluded). */
  tables: string[];
  /** The engine's parse tree of the client's text, the canonical text's tokens and its CTE names, for the join pricing (join-cost.ts). */
  tree: AstNode;
  canonicalTokens: readonly Token[];
  cteNames: readonly string[];
}

export interface GuardContext {
  /** The sandbox session: parse-only statements (formatQuerySingleLine, EXPLAIN AST) run here. */
  wh: Warehouse;
  /** Every table and dictionary name of the current database (to stop a CTE name shadowing one ambiguously). */
  realTables: () => Promise<ReadonlySet<string>>;
  /** The function allow-list, resolved against the engine's catalogue. */
  functions: () => Promise<FunctionPolicy>;
}

/** Decide whether `input` may run; answer the text to execute or throw 400 Invalid query. */
export async function prepareQuery(ctx: GuardContext, input: unknown, maxLimit = SQL_MAX_LIMIT): Promise<PreparedQuery> {
  // 1, 2. The text itself.
  const { text, first } = surfaceOf(input);

  // 3. One well-formed statement, per the engine, without executing the text.
  let canonical: string;
  try {
    const [row] = await ctx.wh.query<{ f: string }>('SELECT formatQuerySingleLine({q:String}) AS f', { params: { q: text }, settings: PARSE_SETTINGS });
    canonical = row?.f ?? '';
  } catch (err) {
    if (err instanceof WarehouseError && /Multi-statements are not allowed/i.test(err.message)) {
      throw invalid('only one statement is allowed', err);
    }
    throw invalid(`syntax error: ${engineMessage(err)}`, err);
  }

  // INTO OUTFILE must not even reach EXPLAIN: refuse it on the engine's canonical text first.
  const canonicalTokens = lex(canonical).tokens;
  if (canonicalTokens.some((t, k) => isKeyword(t, 'INTO') && isKeyword(canonicalTokens[k + 1], 'OUTFILE'))) {
    throw invalid('INTO OUTFILE is not allowed');
  }

  // 4. The parse tree.
  const root = await explainRoot(ctx.wh, text, canonicalTokens);
  if (root.kind !== 'SelectWithUnionQuery') {
    throw invalid(`only read-only SELECT queries are accepted (the engine parsed a ${root.kind.replace(/Query$/, '').toUpperCase()} statement)`);
  }

  const cteList = cteNames(canonical);
  const ctes = new Set(cteList);
  const parsed = { tree: root, canonicalTokens, cteNames: cteList };
  const real = await ctx.realTables();
  for (const name of ctes) {
    if (real.has(name) && !PUBLISHED_TABLES.includes(name)) {
      throw invalid(`a WITH clause may not be named "${name}": that name belongs to an internal table`);
    }
  }
  const policy = await ctx.functions();
  const seen = checkTree(root, { ctes, policy, canonicalTokens });
  if (seen.applyCount > 0) checkApplies(canonicalTokens, seen.applyCount, policy);

  // 5. The outermost LIMIT.
  const limited = withOuterLimit(text, canonical, root, first.type === 'punct', maxLimit);
  return { ...limited, tables: [...seen.tables], ...parsed };
}

/** The text that runs: the client's, when its outermost LIMIT is a literal within `maxLimit`
 *  (read from the canonical text, confirmed in the tree), or with LIMIT SQL_DEFAULT_LIMIT added. */
function withOuterLimit(
  text: string,
  canonical: string,
  root: AstNode,
  parenthesized: boolean,
  maxLimit: number,
): { executed: string; injectedLimit: boolean } {
  const lim = outerLimit(canonical);
  if (lim.nonLiteral) throw invalid(`the outermost LIMIT must be a whole number of rows, at most ${maxLimit}`);
  if (lim.length !== undefined) {
    if (lim.length > maxLimit) throw invalid(`LIMIT ${lim.length} is over the maximum of ${maxLimit} rows`);
    const inTree = [...walk(root)].some((n) => n.kind === 'Literal' && n.detail === `UInt64_${lim.length}` && n.parent?.kind === 'SelectQuery' && outermost(n));
    if (!inTree) throw invalid('could not confirm the outermost LIMIT; write it as LIMIT <rows> at the end of the query');
    return { executed: text, injectedLimit: false };
  }
  const list = root.children[0];
  const single = list?.children.length === 1 && list.children[0]?.kind === 'SelectQuery' && !lim.offsetOnly && !parenthesized;
  // A LIMIT appended after a UNION binds to its last branch only, and cannot follow a
  // parenthesized query or a bare OFFSET: wrap those instead.
  const sep = text.includes('--') || text.includes('#') ? '\n' : ' ';
  const executed = single ? `${text}${sep}LIMIT ${SQL_DEFAULT_LIMIT}` : `SELECT * FROM (\n${text}\n) LIMIT ${SQL_DEFAULT_LIMIT}`;
  return { executed, injectedLimit: true };
}

/** See explainRoot. */
const AST_FORMAT_MARKER = 'TSVRaw';

/**
 * Limits on parsing a client's text (the guard's own statements): deep nesting makes the
 * parse-tree dump grow with the square of the depth, and its size is CPU here.
 */
const PARSE_SETTINGS = {
  max_parser_depth: SQL_PARSE_LIMITS.maxParserDepth,
  max_ast_depth: SQL_PARSE_LIMITS.maxAstDepth,
  max_ast_elements: SQL_PARSE_LIMITS.maxAstElements,
  max_execution_time: SQL_PARSE_LIMITS.seconds,
} as const;

/**
 * The parse tree of one statement. The explained query gets a FORMAT clause of our own: a
 * transport that appends `FORMAT <fmt>` to the text (the server transport does) would
 * otherwise hand that clause to the explained query instead of to EXPLAIN, and the tree
 * would differ by transport. With ours first, a transport's clause goes to EXPLAIN; ours
 * shows up as a known last child of the root, which is removed before judging. When the
 * client wrote a FORMAT of its own, ours lands on EXPLAIN (or is a syntax error) and the
 * marker is missing: refused either way.
 */
async function explainRoot(wh: Warehouse, text: string, canonicalTokens: readonly Token[]): Promise<AstNode> {
  let roots: AstNode[];
  try {
    // No SETTINGS here (they would attach to the explained query): the text already passed
    // the engine's parser under PARSE_SETTINGS in step 3, so its depth is bounded.
    const dump = await wh.queryText(`EXPLAIN AST ${text}\nFORMAT ${AST_FORMAT_MARKER}`, 'TSVRaw', { parseOnly: true });
    if (dump.length > SQL_MAX_AST_DUMP_BYTES) throw invalid('the query is nested too deeply or has too many parts to check; simplify it');
    roots = parseAstDump(dump);
  } catch (err) {
    throw invalid(clauseMessage(canonicalTokens) ?? `syntax error: ${engineMessage(err)}`, err);
  }
  const root = roots[0];
  if (roots.length !== 1 || !root) throw invalid('only one statement is allowed');
  const marker = root.children.at(-1);
  if (marker?.kind !== 'Identifier' || marker.detail !== AST_FORMAT_MARKER) {
    throw invalid(clauseMessage(canonicalTokens) ?? 'only plain SELECT queries are allowed (no FORMAT, SETTINGS or INTO OUTFILE clauses)');
  }
  root.children.pop();
  root.declaredChildren -= 1;
  return root;
}

interface TreeContext {
  ctes: ReadonlySet<string>;
  policy: FunctionPolicy;
  canonicalTokens: readonly Token[];
}

interface TreeFacts {
  tables: Set<string>;
  applyCount: number;
}

/** Walk every node of the tree; refuse the first one that is not on an allow-list. */
function checkTree(root: AstNode, ctx: TreeContext): TreeFacts {
  const facts: TreeFacts = { tables: new Set(), applyCount: 0 };
  const checkTable = (name: string): void => {
    const lower = name.toLowerCase();
    if (lower.startsWith('system.') || lower === 'system' || lower.startsWith('information_schema.') || lower === 'information_schema') {
      throw invalid(`system and information_schema tables are not available; published tables: ${PUBLISHED_TABLES.join(', ')}`);
    }
    if (name.includes('.')) throw invalid(`"${name}": tables are named without a database; published tables: ${PUBLISHED_TABLES.join(', ')}`);
    if (ctx.ctes.has(name)) return;
    if (PUBLISHED_TABLES.includes(name)) {
      facts.tables.add(name);
      return;
    }
    throw invalid(`table "${name}" is not published; published tables: ${PUBLISHED_TABLES.join(', ')}`);
  };

  for (const node of walk(root)) {
    // Every node has exactly the children the dump announced for it: a line forged into
    // the dump (by an identifier the guard failed to reject) would break a count.
    if (node.children.length !== node.declaredChildren) throw invalid('the query could not be read unambiguously');
    if (node.kind === 'Set' || node.kind === 'SetQuery') throw invalid('SETTINGS clauses are not allowed: the service sets the limits');
    if (node.kind === 'QueryParameter') throw invalid('query parameters ({name:Type}) are not supported: write the values into the query');
    if (!KNOWN_KINDS.has(node.kind)) throw invalid(`the query uses a construct this service does not accept (${node.kind})`);
    if (node.kind === 'SelectWithUnionQuery' && node.children.length !== 1) {
      // The extra child is a FORMAT identifier or an INTO OUTFILE target (or settings).
      throw invalid(clauseMessage(ctx.canonicalTokens) ?? 'only plain SELECT queries are allowed (no FORMAT, SETTINGS or INTO OUTFILE clauses)');
    }
    if (node.parent?.kind === 'TableExpression' && !TABLE_EXPRESSION_CHILDREN.has(node.kind)) {
      if (node.kind === 'Function') {
        throw invalid(`table functions are not allowed (${node.detail}); read the published tables: ${PUBLISHED_TABLES.join(', ')}`);
      }
      throw invalid(`unsupported table expression (${node.kind})`);
    }
    switch (node.kind) {
      case 'TableIdentifier':
        checkTable(node.detail);
        break;
      case 'Identifier':
        // _part, _part_offset, _database …: the engine's virtual columns describe storage
        // (and the gaps hidden rows leave in it), not the published data.
        if (node.detail.split('.').some((part) => part.startsWith('_'))) {
          throw invalid(`"${node.detail}": names starting with "_" are the engine's virtual columns and are not available`);
        }
        break;
      case 'Literal': {
        const named = node.detail.startsWith("'") ? ctx.policy.deniedAggregateIn(node.detail) : undefined;
        if (named) throw invalid(`a string may not name the function ${named.name}(): it ${named.reason}`);
        break;
      }
      case 'ColumnsApplyTransformer':
        facts.applyCount += 1;
        break;
      case 'Function': {
        const verdict = ctx.policy.judge(node.detail);
        if (!verdict.allowed) throw invalid(`function ${node.detail}() is not allowed: it ${verdict.reason}`);
        if (IN_FUNCTIONS.has(verdict.canonical.toLowerCase())) {
          // Any identifier argument after the tested value may name a table.
          for (const arg of node.children[0]?.children.slice(1) ?? []) if (arg.kind === 'Identifier') checkTable(arg.detail);
        }
        break;
      }
    }
  }
  return facts;
}

/**
 * APPLY transformers, read from the engine's canonical text (the parse-tree dump prints them
 * without their content). Accepted: `APPLY name` and `APPLY name(literal, …)`, optionally in
 * parentheses, with the function judged by the policy. A lambda (`APPLY x -> …`) or any
 * other shape is refused: its body would escape the walk.
 */
function checkApplies(tokens: readonly Token[], expected: number, policy: FunctionPolicy): void {
  const refuse = (): never => {
    throw invalid('APPLY accepts a function name only (APPLY sum, APPLY quantiles(0.5)); write a lambda as an expression per column instead');
  };
  let found = 0;
  for (let k = 0; k < tokens.length; k++) {
    if (!isKeyword(tokens[k], 'APPLY')) continue;
    found += 1;
    let j = k + 1;
    const wrapped = tokens[j]?.type === 'punct' && tokens[j]?.text === '(';
    if (wrapped) j += 1;
    const name = tokens[j];
    if (!name || (name.type !== 'word' && name.type !== 'quoted')) refuse();
    j += 1;
    if (tokens[j]?.type === 'punct' && tokens[j]?.text === '(') {
      // Parameters: literals only.
      const depth = tokens[j]!.depth;
      j += 1;
      while (j < tokens.length && !(tokens[j]!.type === 'punct' && tokens[j]!.text === ')' && tokens[j]!.depth === depth)) {
        const t = tokens[j]!;
        if (!(t.type === 'number' || t.type === 'string' || (t.type === 'punct' && (t.text === ',' || t.text === '-')))) refuse();
        j += 1;
      }
      j += 1;
    }
    if (wrapped) {
      if (!(tokens[j]?.type === 'punct' && tokens[j]?.text === ')')) refuse();
    } else if (tokens[j]?.type === 'punct' && (tokens[j]?.text === '-' || tokens[j]?.text === '(')) {
      refuse();
    }
    const verdict = policy.judge(name!.text);
    if (!verdict.allowed) throw invalid(`function ${name!.text}() is not allowed: it ${verdict.reason}`);
  }
  if (found !== expected) refuse();
}

/**
 * Which output clause a refused query carries, for the message only (the refusal itself
 * comes from the parse tree or the parser): read from the engine's canonical text.
 */
function clauseMessage(tokens: readonly Token[]): string | undefined {
  const top = tokens.filter((t) => t.depth === 0);
  if (top.some((t, k) => isKeyword(t, 'INTO') && isKeyword(top[k + 1], 'OUTFILE'))) return 'INTO OUTFILE is not allowed';
  // `SETTINGS name =` and `FORMAT Name` at the end are clauses; a column called format is not.
  if (top.some((t, k) => isKeyword(t, 'SETTINGS') && top[k + 1]?.type === 'word' && top[k + 2]?.text === '=')) {
    return 'SETTINGS clauses are not allowed: the service sets the limits';
  }
  const formatAt = top.findIndex(
    (t, k) => isKeyword(t, 'FORMAT') && top[k + 1]?.type === 'word' && (k + 2 === top.length || isKeyword(top[k + 2], 'SETTINGS')),
  );
  if (formatAt >= 0) return 'FORMAT clauses are not allowed: choose "json" or "csv" with the format field';
  return undefined;
}

/** True when no Subquery or WITH element lies between the node and the root. */
function outermost(n: AstNode): boolean {
  for (let p = n.parent; p; p = p.parent) if (p.kind === 'Subquery' || p.kind === 'WithElement') return false;
  return true;
}

export { engineMessage };
