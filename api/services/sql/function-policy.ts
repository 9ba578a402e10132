// Which functions a client's SQL may call: an allow-list, resolved against the engine's own
// catalogue. The reviewed classification lives in function-policy.json (every function of
// the engine, allowed by category or denied with a reason); this module resolves a name as
// the engine would (aliases, case-insensitive names, aggregate combinators) and answers
// allowed or refused. Anything it cannot resolve to an allowed function is refused: a new
// engine function stays unusable until someone classifies it (test/engine/sql-function-policy.test.ts).
import { readFileSync } from 'node:fs';

interface PolicyFile {
  engineVersion: string;
  allowed: Record<string, string[]>;
  denied: Record<string, string[]>;
}

const policy = JSON.parse(readFileSync(new URL('./function-policy.json', import.meta.url), 'utf8')) as PolicyFile;

/** Canonical names a client may call. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(Object.values(policy.allowed).flat());
/** Canonical name -> why it is refused. */
export const DENIED_FUNCTIONS: ReadonlyMap<string, string> = new Map(
  Object.entries(policy.denied).flatMap(([reason, names]) => names.map((n) => [n, reason] as const)),
);
export const POLICY_ENGINE_VERSION = policy.engineVersion;

/**
 * Names the parser or analyzer handles itself, absent from the catalogue: `x -> …` (lambda),
 * `EXISTS (subquery)`, `GROUPING(…)` of GROUPING SETS, and `untuple(t)` (a tuple's
 * elements as columns). Each is pure; its arguments are walked like any other.
 */
const SYNTAX_FUNCTIONS: ReadonlySet<string> = new Set(['lambda', 'exists', 'grouping', 'untuple']);

/** The engine's aggregate-function combinators, longest first so `OrDefault` wins over `If`-like tails. */
const COMBINATORS = [
  'SimpleState',
  'MergeState',
  'OrDefault',
  'Distinct',
  'Resample',
  'ForEach',
  'ArgMax',
  'ArgMin',
  'OrNull',
  'Tuple',
  'Merge',
  'State',
  'Array',
  'Null',
  'Map',
  'If',
];

/** One row of system.functions, as the policy needs it. */
export interface CatalogEntry {
  name: string;
  alias_to: string;
  case_insensitive: number | string;
  is_aggregate: number | string;
}

export type Verdict = { allowed: true; canonical: string } | { allowed: false; reason: string };

export class FunctionPolicy {
  private readonly exact = new Map<string, CatalogEntry>();
  private readonly folded = new Map<string, CatalogEntry>();

  constructor(catalog: readonly CatalogEntry[]) {
    for (const e of catalog) {
      this.exact.set(e.name, e);
      if (Number(e.case_insensitive) === 1) this.folded.set(e.name.toLowerCase(), e);
    }
  }

  /** The catalogue entry the engine would call for `name`, following aliases. */
  private lookup(name: string): CatalogEntry | undefined {
    let e = this.exact.get(name) ?? this.folded.get(name.toLowerCase());
    // Aliases point at canonical names; a chain is followed a few steps at most.
    for (let i = 0; i < 4 && e && e.alias_to !== ''; i++) e = this.exact.get(e.alias_to) ?? this.folded.get(e.alias_to.toLowerCase());
    return e && e.alias_to === '' ? e : undefined;
  }

  judge(name: string): Verdict {
    if (SYNTAX_FUNCTIONS.has(name.toLowerCase())) return { allowed: true, canonical: name.toLowerCase() };
    const e = this.lookup(name);
    if (e) return this.verdict(e.name);
    // `sumIf`, `uniqArrayStateIf`, `quantilesTDigestMerge`: an aggregate function behind combinators.
    const base = this.stripCombinators(name, 0);
    if (base) return this.verdict(base.name);
    return { allowed: false, reason: 'is not a function this service knows' };
  }

  /**
   * The first word of `text` that names a refused aggregate function (directly, by alias,
   * or behind combinators), with the reason. Strings can name aggregate functions to the
   * engine: arrayReduce('f', …), initializeAggregation('fState', …), and type names such
   * as 'AggregateFunction(f, UInt64)' in CAST or JSONExtract.
   */
  deniedAggregateIn(text: string): { name: string; reason: string } | undefined {
    for (const [word] of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
      const e = this.lookup(word) ?? this.stripCombinators(word, 0);
      if (e === undefined || Number(e.is_aggregate) !== 1) continue;
      const verdict = this.verdict(e.name);
      if (!verdict.allowed) return { name: word, reason: verdict.reason };
    }
    return undefined;
  }

  private stripCombinators(name: string, depth: number): CatalogEntry | undefined {
    if (depth > 6) return undefined;
    for (const c of COMBINATORS) {
      if (name.length <= c.length || !name.endsWith(c)) continue;
      const rest = name.slice(0, -c.length);
      const e = this.lookup(rest);
      if (e && Number(e.is_aggregate) === 1) return e;
      const deeper = this.stripCombinators(rest, depth + 1);
      if (deeper) return deeper;
    }
    return undefined;
  }

  private verdict(canonical: string): Verdict {
    if (ALLOWED_FUNCTIONS.has(canonical)) return { allowed: true, canonical };
    return { allowed: false, reason: DENIED_FUNCTIONS.get(canonical) ?? 'is not classified as pure computation' };
  }
}

/** The catalogue query the policy is built from. */
export const CATALOG_SQL = 'SELECT name, alias_to, case_insensitive, is_aggregate FROM system.functions';

/** The policy over the catalogue of the engine behind `wh`. */
export async function loadFunctionPolicy(wh: { query<T>(sql: string): Promise<T[]> }): Promise<FunctionPolicy> {
  return new FunctionPolicy(await wh.query<CatalogEntry>(CATALOG_SQL));
}
