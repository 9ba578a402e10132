// Parsing with the document's limits (length, tokens, selections), and the parse and
// validation caches of one route plugin. The selection count runs right after parsing, so
// a document over it is refused before graphql-js's overlapping-fields rule, which is
// quadratic in the fields it compares, ever sees it.
import { GraphQLError, Kind, parse, validate, type DocumentNode, type GraphQLSchema, type SelectionSetNode, type ValidationRule } from 'graphql';
import { Errors } from '../../../core/errors.ts';
import {
  GRAPHQL_DOCUMENT_CACHE_ENTRIES,
  GRAPHQL_MAX_DOCUMENT_CHARS,
  GRAPHQL_MAX_SAME_NAME,
  GRAPHQL_MAX_SELECTIONS,
  GRAPHQL_MAX_TOKENS,
} from '../../../core/limits/graphql.ts';
import { graphqlError } from './errors.ts';

/** A count past which the refusal says "over a million" rather than a number no one reads. */
const MILLION = 1e6;

export const tooComplex = (message: string): GraphQLError => graphqlError(Errors.queryTooComplex, message);

/**
 * Field selections of the document: of every operation and fragment definition, each
 * fragment spread counting the selections of its fragment (once per spread, so a fragment
 * spreading another twice doubles). Each fragment is measured once and the count stops
 * growing past `cap`, so a hostile document costs time linear in its length.
 */
export function selectionCount(document: DocumentNode, cap = GRAPHQL_MAX_SELECTIONS): number {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const sizes = new Map<string, number>();
  const open = new Set<string>();
  const limit = cap + 1;
  const fragmentSize = (name: string): number => {
    const known = sizes.get(name);
    if (known !== undefined) return known;
    const f = fragments.get(name);
    // Unknown fragments and cycles are other rules' errors: they count as nothing here.
    if (f === undefined || open.has(name)) return 0;
    open.add(name);
    const n = count(f.selectionSet);
    open.delete(name);
    sizes.set(name, n);
    return n;
  };
  const count = (set: SelectionSetNode | undefined): number => {
    if (set === undefined) return 0;
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += 1 + count(s.selectionSet);
      else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet);
      else n += fragmentSize(s.name.value);
      if (n >= limit) return limit;
    }
    return n;
  };
  let total = 0;
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) total += count(d.selectionSet);
    else if (d.kind === Kind.FRAGMENT_DEFINITION) total += fragmentSize(d.name.value);
    if (total >= limit) return limit;
  }
  return total;
}

/**
 * The response name selected most often within one selection set (its fragments' fields
 * merged in, as execution merges them), with how often: graphql-js's overlapping-fields
 * rule compares every pair of such fields. Each fragment's names are gathered once.
 */
export function mostRepeatedName(document: DocumentNode): { name: string; times: number } {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const own = new Map<string, Map<string, number>>();
  const open = new Set<string>();
  let worst = { name: '', times: 0 };
  const add = (into: Map<string, number>, name: string, n: number): void => {
    const times = Math.min((into.get(name) ?? 0) + n, Number.MAX_SAFE_INTEGER);
    into.set(name, times);
    if (times > worst.times) worst = { name, times };
  };
  // Names a selection set brings to its parent's field map; inner sets are checked on the way.
  const names = (set: SelectionSetNode): Map<string, number> => {
    const out = new Map<string, number>();
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        add(out, s.alias?.value ?? s.name.value, 1);
        if (s.selectionSet) names(s.selectionSet);
      } else {
        const inner = s.kind === Kind.INLINE_FRAGMENT ? names(s.selectionSet) : fragmentNames(s.name.value);
        for (const [name, n] of inner) add(out, name, n);
      }
    }
    return out;
  };
  const fragmentNames = (name: string): Map<string, number> => {
    const known = own.get(name);
    if (known !== undefined) return known;
    const f = fragments.get(name);
    if (f === undefined || open.has(name)) return new Map();
    open.add(name);
    const n = names(f.selectionSet);
    open.delete(name);
    own.set(name, n);
    return n;
  };
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) names(d.selectionSet);
    else if (d.kind === Kind.FRAGMENT_DEFINITION) fragmentNames(d.name.value);
  }
  return worst;
}

/** Parse with the limits on the text, then the limits on its selections. */
export function parseDocument(source: string, maxSelections = GRAPHQL_MAX_SELECTIONS): DocumentNode {
  if (source.length > GRAPHQL_MAX_DOCUMENT_CHARS) {
    throw tooComplex(`the document is ${source.length} characters long; at most ${GRAPHQL_MAX_DOCUMENT_CHARS} are allowed`);
  }
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: GRAPHQL_MAX_TOKENS, noLocation: false });
  } catch (err) {
    // graphql 16 words it "more that N tokens"; match the number and the word only.
    if (err instanceof GraphQLError && /\d+ tokens/.test(err.message)) {
      throw tooComplex(`the document has more than ${GRAPHQL_MAX_TOKENS} tokens; send a smaller document`);
    }
    throw err;
  }
  if (selectionCount(document, maxSelections) > maxSelections) {
    throw tooComplex(
      `the document selects more than ${maxSelections} fields (each fragment spread counts the fields it brings); ` +
        'send fewer fields, aliases or fragment spreads per request',
    );
  }
  const repeated = mostRepeatedName(document);
  if (repeated.times > GRAPHQL_MAX_SAME_NAME) {
    throw tooComplex(
      `the document selects "${repeated.name}" ${repeated.times > MILLION ? 'over a million' : repeated.times} times in one selection set (fragments included); ` +
        `at most ${GRAPHQL_MAX_SAME_NAME} are allowed: select each field once, or give each an alias`,
    );
  }
  return document;
}

/**
 * Parsed documents by text, and validation results by document: clients send the same few
 * documents over and over, and validation (some thirty rules) was most of a cached
 * answer's CPU time. One per route plugin (no state at module level).
 */
export class DocumentCache {
  private readonly parsed = new Map<string, DocumentNode>();
  private readonly validations = new WeakMap<DocumentNode, readonly GraphQLError[]>();

  parse(source: string): DocumentNode {
    const hit = this.parsed.get(source);
    if (hit !== undefined) return hit;
    const document = parseDocument(source);
    if (this.parsed.size >= GRAPHQL_DOCUMENT_CACHE_ENTRIES) this.parsed.delete(this.parsed.keys().next().value as string);
    this.parsed.set(source, document);
    return document;
  }

  validate(schema: GraphQLSchema, document: DocumentNode, rules: readonly ValidationRule[]): readonly GraphQLError[] {
    let errors = this.validations.get(document);
    if (errors === undefined) this.validations.set(document, (errors = worded(validate(schema, document, rules))));
    return errors;
  }
}

/** graphql-js ends a long error list with an opaque "Validation aborted."; say what happened instead. */
function worded(errors: readonly GraphQLError[]): readonly GraphQLError[] {
  const last = errors.at(-1);
  if (last === undefined || !/Validation aborted/.test(last.message)) return errors;
  return [
    ...errors.slice(0, -1),
    graphqlError(
      Errors.invalidParams,
      `validation stopped after the ${errors.length - 1} errors above; fix them (fields of one name must have the same arguments and subfields) and send the document again`,
    ),
  ];
}
