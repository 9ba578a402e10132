// The SQL query interface's engine side: decide whether a client's SQL may run, inject the
// default LIMIT, and run it read-only with the engine's own limits.
//
// Order of checks, cheapest and safest first:
//  1. input shape (non-empty string, at most 100000 characters);
//  2. surface (sql-lexer.ts): no semicolon outside strings/comments, nothing left open,
//     no control characters in quoted identifiers, first word SELECT/WITH/(;
//  3. the engine formats the text passed as a bound *value* (formatQuerySingleLine): its
//     own lexer and parser confirm one well-formed statement without ever running it as a
//     statement, so no multi-statement trick can reach step 4;
//  4. the engine's parse tree (`EXPLAIN AST <text>`): one SELECT; every table it reads is
//     published or a CTE; no table functions; no SETTINGS, FORMAT or INTO OUTFILE; no
//     function that reaches outside the data;
//  5. the outermost LIMIT (read from the canonical text of step 3, cross-checked against
//     the tree): at most 10000; absent -> LIMIT 1000 is appended.
// The query then runs with readonly=1 (no writes, no file-reading table functions even
// if a parser gap let one through), max_execution_time (the engine cancels it),
// max_result_rows and max_memory_usage, and with additional_table_filters hiding the
// records of inactive protocols exactly as every other interface does.
import { AppError, Errors } from '../../core/errors.ts';
import { ClickHouseCode, WarehouseError, type Settings, type Warehouse } from '../../views/warehouse.ts';
import { parseAstDump, walk, type AstNode } from './sql-ast.ts';
import { cteNames, isKeyword, lex, LexError, outerLimit, type Token } from './sql-lexer.ts';

export const SQL_MAX_LIMIT = 10_000;
export const SQL_DEFAULT_LIMIT = 1_000;
export const SQL_MAX_LENGTH = 100_000;

/** Tables a client may read. Internal tables (lookups, registry, keys, dead letters) are not listed. */
/** Bytes a client result may hold (uncompressed, as the engine counts them). */
export const MAX_RESULT_BYTES = 256 * 1024 * 1024;

export const PUBLISHED_TABLES: readonly string[] = ['transactions', 'protocol_hourly', 'instruction_hourly'];

/** The engine's result-rows error (TOO_MANY_ROWS_OR_BYTES); views/warehouse.ts lists 158, the older code. */
const TOO_MANY_ROWS_OR_BYTES = 396;

/**
 * Ordinary functions that reach outside the published data: files, dictionaries and other
 * tables, server configuration and identity, introspection, models, sleeping. Compared in
 * lower case; a trailing `*` matches a prefix. Table functions are rejected wholesale.
 */
const DENIED_FUNCTIONS: readonly string[] = [
  'file', 'url', 's3', 'hdfs', 'azureblobstorage', 'gcs', 'mysql', 'postgresql', 'jdbc', 'odbc', 'remote', 'remotesecure',
  'dict*', 'joinget*', 'hascolumnintable', 'getsetting*', 'getmergetreesetting', 'getserversetting*', 'getmacro',
  'hostname', 'fqdn', 'version', 'buildid', 'uptime', 'revision', 'current*', 'enabledprofiles', 'enabledroles',
  'defaultprofiles', 'defaultroles', 'getserverport', 'tcpport', 'serveruuid', 'filesystem*', 'getos*',
  'hasthreadfuzzer', 'initialquery*', 'queryid', 'addresstoline*', 'addresstosymbol', 'demangle', 'trap',
  'evalmlmodel', 'catboostevaluate', 'modelevaluate', 'naivebayesclassifier', 'getclienthttpheader', 'globalvariable',
  'shardnum', 'shardcount', 'displayname', 'zookeepersessionuptime', 'transactionid', 'transactionlatestsnapshot',
  'transactionoldestsnapshot', 'showcertificate', 'sleep', 'sleepeachrow', 'connectionid', 'connection_id',
  'getsubcolumn', 'input', 'executable', 'cluster', 'clusterallreplicas', 'merge', 'view', 'numbers', 'system',
  'authenticateduser', 'generateserialid', '__*',
];

/** First words of statements other than SELECT, named in the rejection message. */
const STATEMENT_WORDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'DROP', 'CREATE', 'ALTER', 'TRUNCATE', 'REPLACE', 'GRANT',
  'REVOKE', 'KILL', 'OPTIMIZE', 'RENAME', 'ATTACH', 'DETACH', 'SYSTEM', 'SET', 'USE', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN',
  'EXCHANGE', 'UNDROP', 'BACKUP', 'RESTORE', 'CHECK', 'WATCH', 'MOVE', 'EXISTS', 'BEGIN', 'COMMIT', 'ROLLBACK', 'UPSERT', 'MERGE']);

const IN_FUNCTIONS = new Set(['in', 'notin', 'globalin', 'globalnotin', 'nullin', 'notnullin', 'globalnullin', 'globalnotnullin']);

function denied(fn: string): boolean {
  const f = fn.toLowerCase();
  return DENIED_FUNCTIONS.some((d) => (d.endsWith('*') ? f.startsWith(d.slice(0, -1)) : f === d));
}

const invalid = (message: string, cause?: unknown): AppError => new AppError(Errors.invalidQuery, message, { cause });

/** The engine's message without its "Code: N. DB::Exception:" frame or our wrapper query. */
export function engineMessage(err: unknown): string {
  let m = err instanceof Error ? err.message : String(err);
  m = m.replace(/^Code: \d+\.\s*/, '').replace(/^DB::Exception:\s*/, '');
  const scope = m.indexOf(': In scope SELECT formatQuerySingleLine');
  if (scope >= 0) m = m.slice(0, scope);
  m = m.replace(/\s*\(version [^)]*\)\s*$/, '');
  // "in scope <query> SETTINGS …" repeats the query with our settings: noise for the client.
  m = m.replace(/ in scope [\s\S]*?(?=\. \([A-Z_]+\)$|$)/, '');
  return m.split('\nStack trace')[0]!.trim();
}

export interface PreparedQuery {
  /** The text that runs: the client's text, plus `LIMIT 1000` when the outer query had none. */
  executed: string;
  injectedLimit: boolean;
}

export interface GuardContext {
  wh: Warehouse;
  /** Every table and dictionary name of the current database (to stop a CTE name shadowing one ambiguously). */
  realTables: () => Promise<ReadonlySet<string>>;
  /**
   * Function aliases, lower-case alias -> canonical name (system.functions.alias_to), so that
   * `DATABASE()` or `user()` are judged as currentDatabase() and currentUser().
   */
  functionAliases: () => Promise<ReadonlyMap<string, string>>;
}

/** The alias map the guard needs, read from the engine's function catalogue. */
export async function loadFunctionAliases(wh: Warehouse): Promise<ReadonlyMap<string, string>> {
  const rows = await wh.query<{ name: string; alias_to: string }>("SELECT name, alias_to FROM system.functions WHERE alias_to != ''");
  return new Map(rows.map((r) => [r.name.toLowerCase(), r.alias_to]));
}

/** Decide whether `input` may run; answer the text to execute or throw 400 Invalid query. */
export async function prepareQuery(ctx: GuardContext, input: unknown, maxLimit = SQL_MAX_LIMIT): Promise<PreparedQuery> {
  if (typeof input !== 'string' || input.trim() === '') throw invalid('the query must be a non-empty string');
  if (input.length > SQL_MAX_LENGTH) {
    throw invalid(`the query is ${input.length} characters long; the maximum is ${SQL_MAX_LENGTH} characters`);
  }
  const text = input.trim();
  // NUL and other control characters have no place in SQL text, and a C string boundary
  // inside the engine could make it see less than the guard saw.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    throw invalid('the query contains control characters (only tab, newline and carriage return are allowed)');
  }

  // 2. Surface checks.
  let lexed;
  try {
    lexed = lex(text);
  } catch (err) {
    if (err instanceof LexError) throw invalid(`${err.message}`);
    throw err;
  }
  if (lexed.semicolons.length > 0) {
    throw invalid('only one statement is allowed: remove the semicolon (";") outside strings and comments');
  }
  for (const t of lexed.tokens) {
    // Identifiers are printed raw in the parse-tree dump; a control character could forge lines there.
    if (t.type === 'quoted' && /[\u0000-\u001f\u007f]/.test(t.text)) {
      throw invalid('quoted identifiers may not contain control characters');
    }
  }
  const first = lexed.tokens[0];
  if (!first) throw invalid('the query must be a non-empty string');
  if (!(isKeyword(first, 'SELECT') || isKeyword(first, 'WITH') || (first.type === 'punct' && first.text === '('))) {
    const word = first.type === 'word' ? first.text.toUpperCase() : undefined;
    if (word !== undefined && STATEMENT_WORDS.has(word)) {
      throw invalid(`${word} statements are not allowed: only read-only SELECT queries (SELECT, WITH …) are accepted`);
    }
    throw invalid(`the query must start with SELECT or WITH (found "${first.text.slice(0, 40)}"): only read-only SELECT queries are accepted`);
  }

  // 3. One well-formed statement, per the engine, without executing the text.
  let canonical: string;
  try {
    const [row] = await ctx.wh.query<{ f: string }>('SELECT formatQuerySingleLine({q:String}) AS f', { params: { q: text } });
    canonical = row?.f ?? '';
  } catch (err) {
    if (err instanceof WarehouseError && /Multi-statements are not allowed/i.test(err.message)) {
      throw invalid('only one statement is allowed', err);
    }
    throw invalid(`syntax error: ${engineMessage(err)}`, err);
  }

  // INTO OUTFILE must not even reach EXPLAIN (which runs without readonly): refuse it on
  // the engine's canonical text first.
  const canonicalTokens = lex(canonical).tokens;
  if (canonicalTokens.some((t, k) => isKeyword(t, 'INTO') && isKeyword(canonicalTokens[k + 1], 'OUTFILE'))) {
    throw invalid('INTO OUTFILE is not allowed');
  }

  // 4. The parse tree.
  // The explained query gets a FORMAT clause of our own: a transport that appends
  // `FORMAT <fmt>` to the text (the server transport does) would otherwise hand that
  // clause to the explained query instead of to EXPLAIN, and the tree would differ by
  // transport. With ours first, a transport's clause goes to EXPLAIN; ours shows up as a
  // known last child of the root, which is removed before judging. When the client wrote
  // a FORMAT of its own, ours lands on EXPLAIN (or is a syntax error) and the marker is
  // missing: refused either way.
  let roots: AstNode[];
  try {
    roots = parseAstDump(await ctx.wh.queryText(`EXPLAIN AST ${text}\nFORMAT ${AST_FORMAT_MARKER}`, 'TSVRaw'));
  } catch (err) {
    throw invalid(clauseMessage(canonicalTokens) ?? `syntax error: ${engineMessage(err)}`, err);
  }
  const root = roots[0];
  if (roots.length !== 1 || !root) throw invalid('only one statement is allowed');
  if (root.kind !== 'SelectWithUnionQuery') {
    throw invalid(`only read-only SELECT queries are accepted (the engine parsed a ${root.kind.replace(/Query$/, '').toUpperCase()} statement)`);
  }
  const marker = root.children.at(-1);
  if (marker?.kind !== 'Identifier' || marker.detail !== AST_FORMAT_MARKER) {
    // Our clause went to EXPLAIN: the query already ended in an output clause of its own.
    throw invalid(clauseMessage(canonicalTokens) ?? 'only plain SELECT queries are allowed (no FORMAT, SETTINGS or INTO OUTFILE clauses)');
  }
  root.children.pop();
  for (const node of walk(root)) {
    if (node.kind === 'SelectWithUnionQuery' && node.children.length !== 1) {
      // The extra child is a FORMAT identifier or an INTO OUTFILE target (or settings).
      throw invalid(clauseMessage(canonicalTokens) ?? 'only plain SELECT queries are allowed (no FORMAT, SETTINGS or INTO OUTFILE clauses)');
    }
    if (node.kind === 'Set' || node.kind === 'SetQuery') throw invalid('SETTINGS clauses are not allowed: the service sets the limits');
  }

  const ctes = new Set(cteNames(canonical));
  const real = await ctx.realTables();
  for (const name of ctes) {
    if (real.has(name) && !PUBLISHED_TABLES.includes(name)) {
      throw invalid(`a WITH clause may not be named "${name}": that name belongs to an internal table`);
    }
  }
  const checkTable = (name: string): void => {
    const lower = name.toLowerCase();
    if (lower.startsWith('system.') || lower === 'system' || lower.startsWith('information_schema.') || lower === 'information_schema') {
      throw invalid(`system and information_schema tables are not available; published tables: ${PUBLISHED_TABLES.join(', ')}`);
    }
    if (name.includes('.')) throw invalid(`"${name}": tables are named without a database; published tables: ${PUBLISHED_TABLES.join(', ')}`);
    if (PUBLISHED_TABLES.includes(name) || ctes.has(name)) return;
    throw invalid(`table "${name}" is not published; published tables: ${PUBLISHED_TABLES.join(', ')}`);
  };

  const aliases = await ctx.functionAliases();
  for (const node of walk(root)) {
    if (node.kind === 'TableIdentifier') checkTable(node.detail);
    else if (node.kind === 'Function') {
      const fn = node.detail;
      if (node.parent?.kind === 'TableExpression') {
        throw invalid(`table functions are not allowed (${fn}); read the published tables: ${PUBLISHED_TABLES.join(', ')}`);
      }
      const canonicalName = aliases.get(fn.toLowerCase());
      if (denied(fn) || (canonicalName !== undefined && denied(canonicalName))) {
        throw invalid(`function ${fn}() is not allowed: it reaches outside the published data`);
      }
      if (IN_FUNCTIONS.has(fn.toLowerCase())) {
        // `x IN name` reads a whole table by name; only published tables and CTEs may be named.
        const arg = node.children[0]?.children[1];
        if (arg?.kind === 'Identifier') checkTable(arg.detail);
      }
    } else if (node.parent?.kind === 'TableExpression' && node.kind !== 'Subquery') {
      throw invalid(`unsupported table expression (${node.kind})`);
    }
  }

  // 5. The outermost LIMIT.
  const lim = outerLimit(canonical);
  if (lim.nonLiteral) throw invalid(`the outermost LIMIT must be a whole number of rows, at most ${maxLimit}`);
  if (lim.length !== undefined) {
    if (lim.length > maxLimit) throw invalid(`LIMIT ${lim.length} is over the maximum of ${maxLimit} rows`);
    const inTree = [...walk(root)].some((n) => n.kind === 'Literal' && n.detail === `UInt64_${lim.length}` && n.parent?.kind === 'SelectQuery' && outermost(n));
    if (!inTree) throw invalid('could not confirm the outermost LIMIT; write it as LIMIT <rows> at the end of the query');
    return { executed: text, injectedLimit: false };
  }
  const list = root.children[0];
  const parenthesized = first.type === 'punct';
  const single = list?.children.length === 1 && list.children[0]?.kind === 'SelectQuery' && !lim.offsetOnly && !parenthesized;
  // A LIMIT appended after a UNION binds to its last branch only, and cannot follow a
  // parenthesized query or a bare OFFSET: wrap those instead.
  const sep = text.includes('--') || text.includes('#') ? '\n' : ' ';
  const executed = single
    ? `${text}${sep}LIMIT ${SQL_DEFAULT_LIMIT}`
    : `SELECT * FROM (\n${text}\n) LIMIT ${SQL_DEFAULT_LIMIT}`;
  return { executed, injectedLimit: true };
}

/** See the EXPLAIN step of prepareQuery. */
const AST_FORMAT_MARKER = 'TSVRaw';

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
  const formatAt = top.findIndex((t, k) => isKeyword(t, 'FORMAT') && top[k + 1]?.type === 'word' && (k + 2 === top.length || isKeyword(top[k + 2], 'SETTINGS')));
  if (formatAt >= 0) return 'FORMAT clauses are not allowed: choose "json" or "csv" with the format field';
  return undefined;
}

/** True when no Subquery or WITH element lies between the node and the root. */
function outermost(n: AstNode): boolean {
  for (let p = n.parent; p; p = p.parent) if (p.kind === 'Subquery' || p.kind === 'WithElement') return false;
  return true;
}

export interface RunLimits {
  timeoutSeconds: number;
  maxMemoryBytes: number;
  /**
   * Row cap of the result and largest LIMIT accepted; only internal callers (benchmarks,
   * exports) lift it above SQL_MAX_LIMIT. Clients always get SQL_MAX_LIMIT.
   */
  maxResultRows?: number;
}

const quote = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Engine settings every client query runs with. */
export function runSettings(limits: RunLimits, visibleProtocols: readonly string[], extra: Settings = {}): Settings {
  const filter = visibleProtocols.length === 0 ? 'false' : `protocol_name IN (${visibleProtocols.map(quote).join(', ')})`;
  const filters = `{${PUBLISHED_TABLES.map((t) => `${quote(t)}: ${quote(filter)}`).join(', ')}}`;
  return {
    max_execution_time: limits.timeoutSeconds,
    timeout_overflow_mode: 'throw',
    max_result_rows: limits.maxResultRows ?? SQL_MAX_LIMIT,
    result_overflow_mode: 'throw',
    max_memory_usage: limits.maxMemoryBytes,
    // Few rows can still be huge (groupArray over everything); the JSON answer is buffered.
    max_result_bytes: limits.maxResultRows === undefined ? MAX_RESULT_BYTES : 0,
    additional_table_filters: filters,
    ...extra,
    // Last, so the settings before it are still allowed to change (readonly=1 freezes settings).
    readonly: 1,
  };
}

/** Map an engine failure of a client query to what the client sees. */
export function queryError(err: unknown, limits: RunLimits): AppError {
  if (err instanceof AppError) return err;
  if (!(err instanceof WarehouseError)) return new AppError(Errors.internal, 'Internal error', { cause: err });
  switch (err.clickhouseCode) {
    case ClickHouseCode.TIMEOUT_EXCEEDED:
    case ClickHouseCode.QUERY_WAS_CANCELLED:
      return new AppError(Errors.queryTimeout,
        `the query ran longer than the ${limits.timeoutSeconds} s time-out and was cancelled by the engine; narrow it (a date range on transactions, or the hourly tables)`,
        { cause: err });
    case TOO_MANY_ROWS_OR_BYTES:
    case ClickHouseCode.TOO_MANY_ROWS:
      if (/max bytes/i.test(err.message)) {
        return invalid(`the result is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB: select fewer or smaller columns, or aggregate`, err);
      }
      return invalid(`the result has more than ${limits.maxResultRows ?? SQL_MAX_LIMIT} rows: add a LIMIT (at most ${SQL_MAX_LIMIT})`, err);
    case ClickHouseCode.MEMORY_LIMIT_EXCEEDED:
      return invalid('the query needs more memory than a query may use: aggregate more, select fewer columns or add a narrower WHERE', err);
    case ClickHouseCode.READONLY:
      return invalid('the query tries something a read-only query may not do', err);
    case undefined:
      return new AppError(Errors.internal, 'Internal error', { cause: err });
    default:
      return invalid(engineMessage(err), err);
  }
}
