// House rules as tests (docs/architecture.md, "House rules"): file size, table names only
// through TABLES, no module-level mutable state, every number of service code in its home
// (core/limits/, core/plans.ts, the env schema, the codes of core/errors.ts), no function
// over 80 lines, and one reader of the environment. Each rule reads the service's own source
// (api/, core/, warehouse/, ingest/; not test/, bench/, scripts/) and fails on a new offence.
// A list names today's exceptions with a reason and an owner: an entry is removed when the
// code it excuses is fixed, and an entry that excuses nothing fails the test too, so the
// lists only shrink.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineAt, serviceFiles, sourceOf, textOf, treeOf, walk, type Node } from '../support/source-scan.ts';

const p = (...parts: string[]): string => path.join(...parts);

/** Expressions TypeScript wraps around a value (`x as const`, `x satisfies T`, `x!`). */
const WRAPPERS = new Set([
  'TSAsExpression',
  'TSSatisfiesExpression',
  'TSNonNullExpression',
  'TSTypeAssertion',
  'TSInstantiationExpression',
  'ParenthesizedExpression',
]);
const unwrap = (n: Node): Node => (WRAPPERS.has(n.type) ? unwrap(n.expression as Node) : n);
/** A node of a type, not a value (`'a' | 'b'`, `Map<string, 2>`): never code that runs. */
const isType = (n: Node): boolean => n.type.startsWith('TS') && !WRAPPERS.has(n.type);

// ---------------------------------------------------------------------------------------
// Rule 1: no service file over MAX_LINES lines.

const MAX_LINES = 400;

/** Files over MAX_LINES today, each with its owner; the owner removes the entry when splitting the file. */
const LONG_FILES: Readonly<Record<string, string>> = {};

function scanLongFiles(): string[] {
  return serviceFiles()
    .map((f) => ({ f, lines: textOf(f).split('\n').length - (textOf(f).endsWith('\n') ? 1 : 0) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ f, lines }) => `${f}: ${lines} lines`);
}

// ---------------------------------------------------------------------------------------
// Rule 3: no literal table name in service code.

/** Files that may spell table names: they are the migrations' own text or the names' one definition. */
const TABLE_NAME_HOMES: Readonly<Record<string, string>> = {
  [p('warehouse', 'tables.ts')]: 'where TABLES is defined',
  [p('warehouse', 'cluster-layout.ts')]:
    "renders the migrations' own text for a cluster: its placement map is keyed by every table the migrations create (tables outside TABLES included)",
};

/** Literal table names in service code today, by file, with their owner. */
const TABLE_LITERALS: Readonly<Record<string, string>> = {};

/** Table names that are also words of the API (a column, a parameter, a sort key): found in SQL positions only. */
const WORDS = new Set(['transactions', 'protocols', 'accounts']);

/** The text of a string or template literal, `${…}` as \u0000; undefined for other nodes. */
function literalText(n: Node): string | undefined {
  if (n.type === 'Literal' && typeof n.value === 'string') return n.value;
  if (n.type === 'TemplateLiteral') {
    const quasis = n.quasis as { value: { cooked: string | null; raw: string } }[];
    return quasis.map((q) => q.value.cooked ?? q.value.raw).join('\u0000');
  }
  return undefined;
}

async function scanTableNames(files: readonly string[] = serviceFiles()): Promise<string[]> {
  const { TABLES } = await import('../../warehouse/tables.ts');
  const names = Object.values(TABLES) as string[];
  const distinct = names.filter((n) => !WORDS.has(n));
  const words = names.filter((n) => WORDS.has(n));
  const id = (list: string[]): string => `(?:${list.join('|')})`;
  // Anywhere in a string, quoted or bare: a name no word of the API shares.
  const anywhere = new RegExp(`(?<![A-Za-z0-9_])${id(distinct)}(?![A-Za-z0-9_])`);
  // In SQL positions (across lines, after an optional database prefix), or quoted inside SQL text.
  const sqlPosition = new RegExp(
    `\\b(?:FROM|JOIN|INTO|TABLE|UPDATE|VIEW|TO|EXISTS)\\s+(?:[\\w\\u0000\`"]+\\.)?[\`"]?${id(words)}(?![A-Za-z0-9_])|'${id(words)}'`,
    'i',
  );
  const offenders: string[] = [];
  for (const file of files) {
    if (TABLE_NAME_HOMES[file] !== undefined) continue;
    walk(treeOf(file), (n, parent) => {
      // Type positions (`'transactions' | 'fees'`) and import paths are not SQL.
      if (isType(n) || n.type === 'ImportDeclaration' || (n.type === 'ExportNamedDeclaration' && n.source)) return false;
      const text = literalText(n);
      if (text === undefined) return;
      let hit = anywhere.test(text) || sqlPosition.test(text);
      // A whole literal naming a word-table where a table is expected: compared with a
      // `table`, or handed to a call that takes a table.
      if (!hit && WORDS.has(text) && parent !== undefined) {
        const other = parent.type === 'BinaryExpression' ? sourceOf(file, (parent.left === n ? parent.right : parent.left) as Node) : '';
        const callee = parent.type === 'CallExpression' ? sourceOf(file, parent.callee as Node) : '';
        hit = /\btable$/i.test(other) || /(?:^|\.)(?:insert|localName|optimize|truncate|table\w*)$/i.test(callee);
      }
      if (hit) offenders.push(`${file}:${lineAt(file, n.start)}: ${sourceOf(file, n).split('\n')[0]!.slice(0, 120)}`);
      return false;
    });
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------
// Rule 4: no module-level mutable state.

/** Constructors whose instances are mutable containers. */
const CONTAINERS =
  /^(?:Map|Set|WeakMap|WeakSet|Array|ArrayBuffer|SharedArrayBuffer|(?:Ui|I)nt(?:8|16|32)Array|Uint8ClampedArray|Float(?:32|64)Array|Big(?:Ui|I)nt64Array|EventEmitter)$/;
/** Constructors whose instances hold no state that changes (or only a compiled pattern). */
const IMMUTABLE = /^(?:RegExp|URL|TextEncoder|TextDecoder|Intl\.\w+|Error|\w+Error)$/;

/** Module-level state in service code today, as `file: name`, with its owner and the way out. */
const MODULE_STATE: Readonly<Record<string, string>> = {};

/** Calls and assignments that change a container or an object (`x.push(…)`, `x[i] = …`, `x.y = …`). */
const mutationOf = (name: string): RegExp =>
  new RegExp(
    `(?<![\\w.])${name}(?:\\.(?:push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin|set|delete|clear|add|write\\w*)\\(|\\s*\\[[^\\]\\n]*\\]\\s*(?:[-+*/|&^]|<<|>>>?)?=(?!=)|\\.\\w+\\s*=(?!=))`,
  );

/**
 * Top-level state of a module: a `let` or `var`; an instance of a class (a validator with its
 * cache, a client); a container (Map, Set, array, typed array, buffer, object literal) that
 * its module changes, or that it exports without a read-only type (`ReadonlySet`,
 * `ReadonlyMap`) so that any importer could. A lookup table built once and never changed is
 * not state.
 */
function scanMutableState(): string[] {
  const offenders: string[] = [];
  for (const file of serviceFiles()) {
    const text = textOf(file);
    for (const stmt of treeOf(file).body as Node[]) {
      const exported = stmt.type === 'ExportNamedDeclaration';
      const decl = exported ? (stmt.declaration as Node | null) : stmt;
      if (decl?.type !== 'VariableDeclaration') continue;
      for (const d of decl.declarations as Node[]) {
        const id = d.id as Node;
        const name = id.type === 'Identifier' ? String(id.name) : sourceOf(file, id);
        const at = `${file}: ${name}`;
        if (decl.kind !== 'const') {
          offenders.push(`${at} (top-level ${String(decl.kind)})`);
          continue;
        }
        if (d.init === null || d.init === undefined || id.type !== 'Identifier') continue;
        const init = unwrap(d.init as Node);
        const callee = init.type === 'NewExpression' || init.type === 'CallExpression' ? sourceOf(file, init.callee as Node) : '';
        const readonlyType = /^:\s*Readonly|^:\s*readonly /.test(id.typeAnnotation ? sourceOf(file, id.typeAnnotation as Node) : '');
        const changed = mutationOf(name).test(text) || (exported && !readonlyType);
        if (init.type === 'NewExpression' && !CONTAINERS.test(callee)) {
          if (!IMMUTABLE.test(callee)) offenders.push(`${at} (an instance of ${callee})`);
        } else if (init.type === 'NewExpression' || /^(?:Buffer\.(?:alloc|allocUnsafe|allocUnsafeSlow|from)|Array\.(?:from|of))$/.test(callee)) {
          if (changed)
            offenders.push(
              `${at} (${callee}${init.type === 'NewExpression' ? '' : '()'}${exported && !readonlyType ? ', exported without a read-only type' : ', changed after load'})`,
            );
        } else if ((init.type === 'ArrayExpression' || init.type === 'ObjectExpression') && mutationOf(name).test(text)) {
          offenders.push(`${at} (${init.type === 'ArrayExpression' ? 'an array' : 'an object'} changed after load)`);
        }
      }
    }
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------
// Rule 5: every number in the limits home. A number of service code above 10 is a limit, a
// code or a fact, and each has a name in its home: limits in core/limits/ (by concern) or
// core/plans.ts (by plan), a variable's default beside it in core/config/env-schema.ts, codes
// (HTTP, JSON-RPC) in core/errors.ts. Every numeric literal is read, not only top-level
// constants: `retryAfterSeconds: 30`, `bodyLimit: 1024 * 1024` and `case 396` are offences.

/** Files that are the home of numbers: where a number gets its name. */
const NUMBER_HOMES = [
  p('core', 'limits') + path.sep,
  p('core', 'plans.ts'),
  p('core', 'config', 'env-schema.ts'),
  p('core', 'errors.ts'),
  // Calendar facts: days per month, the leap-year rule.
  p('core', 'vocabulary', 'calendar.ts'),
  // The demo data's shape (DESIGN.md section 5): fees, compute units and shares per protocol, a table of data.
  p('ingest', 'protocol-profiles.ts'),
];
/** The deliberate port of an outside algorithm (CityHash v1.0.2): its constants are the algorithm's. */
const PORTS = [p('ingest', 'city-hash.ts')];

/** Numbers at or under this are counts of things in code (an index, a pair), not figures. */
const SMALL = 10;
/** Factors of units (seconds in a minute, hour, day; days in a week; bytes in a KiB): in a
 *  product or a quotient they convert a unit, they do not set a limit. */
const UNIT_FACTORS = new Set([7, 24, 60, 100, 1000, 1024, 3600, 86_400, 60_000, 3_600_000, 86_400_000]);
/** A constant named for a unit (HOUR, DAY_MS, WEEK_SECONDS, MiB). */
const UNIT_NAME = /^(?:SECOND|MINUTE|HOUR|DAY|WEEK|KiB|MiB|GiB|THOUSAND|MILLION|BILLION)S?(?:_MS|_SECONDS)?$/i;
/** Calls and properties whose numbers are HTTP statuses: a route's answers, a reply's code, a raw response's head. */
const STATUS_CALLS = /(?:^|\.)(?:code|status|writeHead|errors|refuse|kindForStatus|statusText|titleOf)$/;
const STATUS_PROPS = /^(?:status|statusCode|httpStatus)$/;
const isStatus = (v: number): boolean => Number.isInteger(v) && v >= 100 && v <= 599;

function numberIsNamed(file: string, n: Node, parent: Node | undefined): boolean {
  const v = n.value as number;
  if (v <= SMALL || /^0x/i.test(sourceOf(file, n))) return true;
  // A unit factor converts the other operand: `5 * 60_000`. Two factors (`1024 * 1024`) make a size, which needs a name.
  if (UNIT_FACTORS.has(v) && parent?.type === 'BinaryExpression' && ['*', '/'].includes(String(parent.operator))) {
    const other = (parent.left === n ? parent.right : parent.left) as Node;
    return !(other.type === 'Literal' && UNIT_FACTORS.has(other.value as number));
  }
  if (!isStatus(v) || parent === undefined) return false;
  // `200: {…}` in a route's response schema; `status: 404`; `.code(202)`, `errors(400, 401)`.
  if (parent.type === 'Property' && (parent.key === n || STATUS_PROPS.test(sourceOf(file, parent.key as Node)))) return true;
  if (parent.type === 'CallExpression' && STATUS_CALLS.test(sourceOf(file, parent.callee as Node))) return true;
  // `reply.code(failing ? 503 : 200)`: a choice between two statuses.
  if (
    parent.type === 'ConditionalExpression' &&
    [parent.consequent, parent.alternate].every((b) => (b as Node).type === 'Literal' && isStatus((b as Node).value as number))
  )
    return true;
  // `res.statusCode === 404`, `status >= 500`.
  return parent.type === 'BinaryExpression' && /status|\.http\b/i.test(sourceOf(file, parent));
}

/** Numeric literals above SMALL outside the homes, as `file:line: source`. */
function scanNumbers(): string[] {
  const offenders: string[] = [];
  for (const file of serviceFiles()) {
    if (NUMBER_HOMES.some((h) => file === h || file.startsWith(h)) || PORTS.includes(file)) continue;
    walk(treeOf(file), (n, parent) => {
      if (isType(n)) return false;
      // `const HOUR_MS = 3_600_000`: a constant named for a unit is that unit's size, not a limit.
      if (n.type === 'VariableDeclarator' && (n.id as Node).type === 'Identifier' && UNIT_NAME.test(String((n.id as Node).name))) return false;
      // `2 ** 32`: the bound of a binary range, named by its exponent.
      if (n.type === 'BinaryExpression' && n.operator === '**') return false;
      if (n.type !== 'Literal' || typeof n.value !== 'number' || numberIsNamed(file, n, parent)) return;
      offenders.push(
        `${file}:${lineAt(file, n.start)}: ${sourceOf(file, parent ?? n)
          .split('\n')[0]!
          .slice(0, 80)}`,
      );
    });
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------
// Rule 7: no function over MAX_FUNCTION_LINES lines: a longer one holds a concept of its own
// that has no name yet (installAccessControl held the key check, the rate limits, the slots
// and the usage records in 202 lines).

const MAX_FUNCTION_LINES = 80;
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** Functions over the cap, as `file:line name (n lines)`; the deliberate ports excepted by name. */
function scanLongFunctions(): string[] {
  const offenders: string[] = [];
  for (const file of serviceFiles()) {
    walk(treeOf(file), (n, parent) => {
      if (!FUNCTIONS.has(n.type)) return;
      const first = lineAt(file, n.start);
      const lines = lineAt(file, n.end) - first + 1;
      if (lines <= MAX_FUNCTION_LINES) return;
      const id = n.id as Node | null | undefined;
      const name = id
        ? String(id.name)
        : parent?.type === 'VariableDeclarator' || parent?.type === 'Property' || parent?.type === 'MethodDefinition'
          ? sourceOf(file, (parent.id ?? parent.key) as Node)
          : '(anonymous)';
      if (PORTS.includes(file) && name === 'cityHasher') return;
      offenders.push(`${file}:${first} ${name} (${lines} lines)`);
    });
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------
// Rule 6: one reader of the environment: core/config/load-config.ts.

/** Service files other than core/config/load-config.ts that read process.env today, with their owner. */
const ENV_READERS: Readonly<Record<string, string>> = {};

function scanEnvReaders(): string[] {
  const offenders: string[] = [];
  for (const file of serviceFiles()) {
    if (file === p('core', 'config', 'load-config.ts')) continue;
    walk(treeOf(file), (n) => {
      const obj = n.object as Node | undefined;
      const prop = n.property as Node | undefined;
      if (n.type === 'MemberExpression' && obj?.type === 'Identifier' && obj.name === 'process' && prop?.type === 'Identifier' && prop.name === 'env') {
        offenders.push(`${file}:${lineAt(file, n.start)}`);
      }
    });
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------

/** Offences not excused by a list, and list entries that excuse nothing any more. */
function judge(offences: string[], excused: (offence: string) => string | undefined, entries: readonly string[]): { unexcused: string[]; stale: string[] } {
  const used = new Set<string>();
  const unexcused: string[] = [];
  for (const o of offences) {
    const entry = excused(o);
    if (entry === undefined) unexcused.push(o);
    else used.add(entry);
  }
  return { unexcused, stale: entries.filter((e) => !used.has(e)) };
}

/** The `file: NAME` part of a `file: NAME (…)` or `file: NAME = n` offence, and the file-wide `file: *`. */
const byName =
  (list: Readonly<Record<string, string>>) =>
  (o: string): string | undefined => {
    const key = o.replace(/ (?:\(.*\)|= .*)$/, '');
    return [key, `${key.split(': ')[0]}: *`].find((k) => list[k] !== undefined);
  };
const byFile =
  (list: Readonly<Record<string, string>>) =>
  (o: string): string | undefined => {
    const file = o.split(':')[0]!;
    return list[file] === undefined ? undefined : file;
  };

describe('house rules', () => {
  it(`no service file is longer than ${MAX_LINES} lines (the allow-list only shrinks)`, () => {
    const { unexcused, stale } = judge(scanLongFiles(), byFile(LONG_FILES), Object.keys(LONG_FILES));
    expect(unexcused).toEqual([]);
    expect(stale, 'files now within the limit: remove them from LONG_FILES').toEqual([]);
  });

  it('no service code names a table literally, in any string, across lines: it goes through TABLES (warehouse/tables.ts)', async () => {
    const { unexcused, stale } = judge(await scanTableNames(), byFile(TABLE_LITERALS), Object.keys(TABLE_LITERALS));
    expect(unexcused).toEqual([]);
    expect(stale, 'files that name tables through TABLES now: remove them from TABLE_LITERALS').toEqual([]);
  });

  it('finds a table name in the places SQL puts one (the scan itself)', async () => {
    const sample = p('test', 'fixtures', 'table-literal-samples.ts');
    const found = await scanTableNames([sample]);
    // A bare name inside multi-line SQL, and a name quoted inside SQL text.
    expect(found.some((o) => o.startsWith(`${sample}:3:`))).toBe(true);
    expect(found.some((o) => o.startsWith(`${sample}:5:`))).toBe(true);
  });

  it('holds no mutable state at module level: state lives in objects the services wiring builds', () => {
    const { unexcused, stale } = judge(scanMutableState(), byName(MODULE_STATE), Object.keys(MODULE_STATE));
    expect(unexcused).toEqual([]);
    expect(stale, 'state now held by objects: remove it from MODULE_STATE').toEqual([]);
  });

  it('keeps every number of service code in its home: no numeric literal above 10 elsewhere', () => {
    expect(scanNumbers()).toEqual([]);
  });

  it(`holds no function over ${MAX_FUNCTION_LINES} lines (the CityHash port excepted by name)`, () => {
    expect(scanLongFunctions()).toEqual([]);
  });

  it('reads the environment in one place: core/config/load-config.ts', () => {
    const { unexcused, stale } = judge(scanEnvReaders(), byFile(ENV_READERS), Object.keys(ENV_READERS));
    expect(unexcused).toEqual([]);
    expect(stale, 'files that no longer read process.env: remove them from ENV_READERS').toEqual([]);
  });
});
