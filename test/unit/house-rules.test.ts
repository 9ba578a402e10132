// House rules as tests (docs/architecture.md, "House rules"): file size, table names only
// through TABLES, no module-level mutable state, every limit in core/limits.ts or
// core/plans.ts, and one reader of the environment. Each rule reads the service's own
// source (api/, core/, warehouse/, ingest/; not test/, bench/, scripts/) and fails on a new
// offence. Its allow-list names today's exceptions with a reason and an owner: an entry is
// removed when the code it excuses is fixed, and an entry that excuses nothing fails the
// test too, so the lists only shrink.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineAt, serviceFiles, sourceOf, textOf, treeOf, walk, type Node } from '../support/source-scan.ts';

const p = (...parts: string[]): string => path.join(...parts);

/** Expressions TypeScript wraps around a value (`x as const`, `x satisfies T`, `x!`). */
const WRAPPERS = new Set(['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'TSTypeAssertion', 'TSInstantiationExpression', 'ParenthesizedExpression']);
const unwrap = (n: Node): Node => (WRAPPERS.has(n.type) ? unwrap(n.expression as Node) : n);
/** A node of a type, not a value (`'a' | 'b'`, `Map<string, 2>`): never code that runs. */
const isType = (n: Node): boolean => n.type.startsWith('TS') && !WRAPPERS.has(n.type);

// ---------------------------------------------------------------------------------------
// Rule 1: no service file over MAX_LINES lines.

const MAX_LINES = 400;

/** Files over MAX_LINES today, each with its owner; the owner removes the entry when splitting the file. */
const LONG_FILES: Readonly<Record<string, string>> = {
};

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
  [p('warehouse', 'cluster-layout.ts')]: 'renders the migrations\' own text for a cluster: its placement map is keyed by every table the migrations create (tables outside TABLES included)',
};

/** Literal table names in service code today, by file, with their owner. */
const TABLE_LITERALS: Readonly<Record<string, string>> = {
};

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
  const sqlPosition = new RegExp(`\\b(?:FROM|JOIN|INTO|TABLE|UPDATE|VIEW|TO|EXISTS)\\s+(?:[\\w\\u0000\`"]+\\.)?[\`"]?${id(words)}(?![A-Za-z0-9_])|'${id(words)}'`, 'i');
  const offenders: string[] = [];
  for (const file of files) {
    if (TABLE_NAME_HOMES[file] !== undefined) continue;
    walk(treeOf(file), (n, parent) => {
      // Type positions (`'transactions' | 'fees'`) and import paths are not SQL.
      if (isType(n) || n.type === 'ImportDeclaration' || n.type === 'ExportNamedDeclaration' && n.source) return false;
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
const CONTAINERS = /^(?:Map|Set|WeakMap|WeakSet|Array|ArrayBuffer|SharedArrayBuffer|(?:Ui|I)nt(?:8|16|32)Array|Uint8ClampedArray|Float(?:32|64)Array|Big(?:Ui|I)nt64Array|EventEmitter)$/;
/** Constructors whose instances hold no state that changes (or only a compiled pattern). */
const IMMUTABLE = /^(?:RegExp|URL|TextEncoder|TextDecoder|Intl\.\w+|Error|\w+Error)$/;

/** Module-level state in service code today, as `file: name`, with its owner and the way out. */
const MODULE_STATE: Readonly<Record<string, string>> = {
};

/** Calls and assignments that change a container or an object (`x.push(…)`, `x[i] = …`, `x.y = …`). */
const mutationOf = (name: string): RegExp =>
  new RegExp(`(?<![\\w.])${name}(?:\\.(?:push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin|set|delete|clear|add|write\\w*)\\(|\\s*\\[[^\\]\\n]*\\]\\s*(?:[-+*/|&^]|<<|>>>?)?=(?!=)|\\.\\w+\\s*=(?!=))`);

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
          if (changed) offenders.push(`${at} (${callee}${init.type === 'NewExpression' ? '' : '()'}${exported && !readonlyType ? ', exported without a read-only type' : ', changed after load'})`);
        } else if ((init.type === 'ArrayExpression' || init.type === 'ObjectExpression') && mutationOf(name).test(text)) {
          offenders.push(`${at} (${init.type === 'ArrayExpression' ? 'an array' : 'an object'} changed after load)`);
        }
      }
    }
  }
  return offenders;
}

// ---------------------------------------------------------------------------------------
// Rule 5: every number in core/limits.ts or core/plans.ts.

/** Numbers that are not limits, as `file: NAME`, with what they are (kept short: everything
 *  else that bounds work, memory or time is a limit and lives in core/limits.ts or core/plans.ts). */
const NOT_LIMITS: Readonly<Record<string, string>> = {
  [`${p('warehouse', 'warehouse.ts')}: ClickHouseCode`]: 'the engine\'s error codes',
  [`${p('ingest', 'steps', 'insert.ts')}: INSERT_FORMAT_ERRORS`]: 'the engine\'s error codes of a malformed insert',
  [`${p('ingest', 'protocol-profiles.ts')}: PROTOCOL_PROFILES`]: 'the demo data\'s shape (DESIGN.md section 5): fees, compute units and shares per protocol',
  [`${p('ingest', 'demo-generator.ts')}: SLOT_ANCHOR`]: 'a point in Solana\'s history the demo slots are counted from',
  [`${p('api', 'rpc', 'raw-ids.ts')}: ARR`]: 'a state of the id scanner',
  [`${p('ingest', 'parse-pool.ts')}: DEAD`]: 'a state of a parse worker',
  [`${p('api', 'analytics', 'question', 'model.ts')}: END_OF_TIME`]: '2^32: one past the last instant a DateTime column holds',
  [`${p('ingest', 'steps', 'validate.ts')}: RecordSchema`]: 'the UInt16 and UInt32 bounds of stored columns (and the accounts list the engine stores)',
  [`${p('api', 'analytics', 'question', 'granularity.ts')}: FIRST_MONDAY`]: 'a calendar fact: 1970-01-05, day 4, was a Monday',
  [`${p('api', 'analytics', 'activity-buckets.ts')}: SPAN`]: 'the length of an hour and of a day in seconds',
  [`${p('api', 'analytics', 'question', 'model.ts')}: MEASURES`]: 'a rate is a percentage (scale 100)',
  [`${p('api', 'exports', 'export-schemas.ts')}: ExportJobViewSchema`]: 'progress is a percentage (0-100)',
  [`${p('api', 'dashboard', 'passwords.ts')}: SCRYPT_PARAMS`]: 'scrypt\'s cost parameters and key length: the stored hash\'s format, which verifyPassword bounds itself',
};

/** Limits still outside core/ today, as `file: NAME`, with their owner, who moves them. */
const LIMITS_TO_MOVE: Readonly<Record<string, string>> = {
};

/** Factors of units (seconds in a minute, hour, day; days in a week; bytes in a KiB): in a
 *  product or a quotient they convert a unit, they do not set a limit. */
const UNIT_FACTORS = new Set([7, 24, 60, 1000, 1024, 3600, 86_400, 60_000, 3_600_000, 86_400_000]);
/** A constant named for a unit (HOUR, DAY_MS, WEEK_SECONDS, MiB) is its size, not a limit. */
const UNIT_NAME = /^(?:MINUTE|HOUR|DAY|WEEK|KiB|MiB|GiB)S?(?:_MS|_SECONDS)?$/i;

/**
 * Numbers of 2 or more in the top-level constants of a service file outside core/, as
 * `file: NAME = number`. Not counted: a constant's functions (they compute; the constant is
 * the function), property keys (HTTP statuses of a response schema), unit factors, the
 * bounds of a binary range (`2 ** 32`) and numbers written in hex (character codes, bit
 * masks).
 */
function scanNumbers(): string[] {
  const offenders: string[] = [];
  for (const file of serviceFiles()) {
    if (file.startsWith(`core${path.sep}`)) continue;
    for (const stmt of treeOf(file).body as Node[]) {
      const decl = stmt.type === 'ExportNamedDeclaration' ? (stmt.declaration as Node | null) : stmt;
      if (decl?.type !== 'VariableDeclaration' || decl.kind !== 'const') continue;
      for (const d of decl.declarations as Node[]) {
        if (d.init === null || d.init === undefined) continue;
        const name = sourceOf(file, d.id as Node).split(':')[0]!.trim();
        walk(d.init as Node, (n, parent) => {
          if (['ArrowFunctionExpression', 'FunctionExpression', 'ClassExpression'].includes(n.type) || isType(n)) return false;
          if (n.type === 'BinaryExpression' && n.operator === '**' && (n.left as Node).type === 'Literal' && (n.left as Node).value === 2) return false;
          if (n.type !== 'Literal' || typeof n.value !== 'number' || n.value < 2 || UNIT_NAME.test(name)) return;
          if (UNIT_FACTORS.has(n.value) && parent?.type === 'BinaryExpression' && ['*', '/'].includes(String(parent.operator))) return;
          if (parent?.type === 'Property' && parent.key === n) return;
          // HTTP statuses a route declares it may answer (`...errors(400, 401)`): codes, not limits.
          if (parent?.type === 'CallExpression' && (parent.callee as Node).type === 'Identifier' && (parent.callee as Node).name === 'errors') return;
          if (/^0x/i.test(sourceOf(file, n))) return;
          offenders.push(`${file}: ${name} = ${sourceOf(file, n)}`);
        });
      }
    }
  }
  return [...new Set(offenders)];
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
const byName = (list: Readonly<Record<string, string>>) => (o: string): string | undefined => {
  const key = o.replace(/ (?:\(.*\)|= .*)$/, '');
  return [key, `${key.split(': ')[0]}: *`].find((k) => list[k] !== undefined);
};
const byFile = (list: Readonly<Record<string, string>>) => (o: string): string | undefined => {
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

  it('keeps every limit in core/limits.ts or core/plans.ts: no number of 2 or more in a top-level constant elsewhere', () => {
    const { unexcused, stale } = judge(scanNumbers(), (o) => byName(NOT_LIMITS)(o) ?? byName(LIMITS_TO_MOVE)(o), [...Object.keys(NOT_LIMITS), ...Object.keys(LIMITS_TO_MOVE)]);
    expect(unexcused).toEqual([]);
    expect(stale, 'entries that excuse nothing any more: remove them').toEqual([]);
  });

  it('reads the environment in one place: core/config/load-config.ts', () => {
    const { unexcused, stale } = judge(scanEnvReaders(), byFile(ENV_READERS), Object.keys(ENV_READERS));
    expect(unexcused).toEqual([]);
    expect(stale, 'files that no longer read process.env: remove them from ENV_READERS').toEqual([]);
  });
});
