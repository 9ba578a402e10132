// Walking the service's documents (OpenAPI, OpenRPC) as a client generator reads them: every
// schema with where it sits, references resolved, and how long a string a pattern allows.
type Json = Record<string, unknown>;

export interface SchemaAt {
  schema: Json;
  /** Where it sits, e.g. "paths./v1/exports.post.requestBody.content.application/json.schema.properties.seed". */
  at: string;
  /** The property it is the schema of ("seed"), an array's item inheriting its array's, or undefined. */
  property: string | undefined;
}

const SCHEMA_HOLDERS = new Set(['schema', 'items', 'additionalProperties', 'not']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);

/**
 * Every schema object of a document, once each (component schemas included, references not
 * followed): what a generator turns into a type. Found under `schema` (parameters, media types,
 * headers, OpenRPC params and results), `properties`, `items`, the composition lists and
 * components/schemas.
 */
export function schemasOf(doc: unknown): SchemaAt[] {
  const out: SchemaAt[] = [];
  const visitSchema = (schema: unknown, at: string, property: string | undefined): void => {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
    const s = schema as Json;
    out.push({ schema: s, at, property });
    for (const [k, v] of Object.entries(s)) {
      if (k === 'properties' && typeof v === 'object' && v !== null) {
        for (const [name, p] of Object.entries(v)) visitSchema(p, `${at}.properties.${name}`, name);
      } else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) {
        for (const [i, x] of v.entries()) visitSchema(x, `${at}.${k}.${i}`, property);
      } else if (SCHEMA_HOLDERS.has(k)) {
        if (Array.isArray(v)) for (const [i, x] of v.entries()) visitSchema(x, `${at}.${k}.${i}`, property);
        else visitSchema(v, `${at}.${k}`, property);
      }
    }
  };
  const visitNode = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, x] of node.entries()) visitNode(x, `${at}.${i}`);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'schema') visitSchema(v, `${at}.schema`, undefined);
      else if (k === 'schemas' && at.endsWith('components'))
        for (const [name, s] of Object.entries(v as Json)) visitSchema(s, `${at}.schemas.${name}`, undefined);
      else visitNode(v, `${at}.${k}`);
    }
  };
  visitNode(doc, '');
  return out.map((s) => ({ ...s, at: s.at.replace(/^\./, '') }));
}

/** The schema a `$ref` (or an allOf of one `$ref`) names, else the schema itself. */
export function resolved(doc: Json, schema: Json): Json {
  const only = Array.isArray(schema.allOf) && schema.allOf.length === 1 ? (schema.allOf[0] as Json) : schema;
  const ref = only.$ref;
  if (typeof ref !== 'string') return schema;
  const target = ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part], doc);
  return target as Json;
}

export const isInteger = (s: Json): boolean => s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer'));
/** A number that is a whole number (`multipleOf: 1`): an integer to a reader. */
export const isWholeNumber = (s: Json): boolean =>
  isInteger(s) || ((s.type === 'number' || (Array.isArray(s.type) && s.type.includes('number'))) && s.multipleOf === 1);
export const isFraction = (s: Json): boolean => !isWholeNumber(s) && (s.type === 'number' || (Array.isArray(s.type) && s.type.includes('number')));

/**
 * The longest string a regular expression of the documents' kind matches (anchors, groups,
 * alternation, character classes, escapes, quantifiers ? * + {n} {n,} {n,m}): Infinity when
 * it is unbounded.
 */
export function longestMatch(pattern: string): number {
  let i = 0;
  const alternatives = (): number => {
    let best = sequence();
    while (pattern[i] === '|') {
      i++;
      best = Math.max(best, sequence());
    }
    return best;
  };
  const sequence = (): number => {
    let total = 0;
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') total += quantified(atom());
    return total;
  };
  const atom = (): number => {
    const c = pattern[i++];
    if (c === '^' || c === '$') return 0;
    if (c === '(') {
      if (pattern[i] === '?') i += 2;
      const n = alternatives();
      i++;
      return n;
    }
    if (c === '[') {
      while (pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      i++;
      return 1;
    }
    if (c === '\\') i++;
    return 1;
  };
  const quantified = (n: number): number => {
    let times = 1;
    const braces = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
    if (pattern[i] === '?') i++;
    else if (pattern[i] === '*' || pattern[i] === '+') {
      i++;
      times = Number.POSITIVE_INFINITY;
    } else if (braces) {
      i += braces[0].length;
      times = braces[2] === undefined ? Number(braces[1]) : braces[3] === '' ? Number.POSITIVE_INFINITY : Number(braces[3]);
    }
    if (pattern[i] === '?') i++;
    return n === 0 ? 0 : n * times;
  };
  return alternatives();
}

/** The longest value a string schema allows, in characters (Infinity: unbounded). */
export function longestString(s: Json): number {
  const bounds = [Number.POSITIVE_INFINITY];
  if (typeof s.maxLength === 'number') bounds.push(s.maxLength);
  if (typeof s.pattern === 'string') bounds.push(longestMatch(s.pattern));
  if (Array.isArray(s.enum)) bounds.push(Math.max(...s.enum.map((v) => String(v).length)));
  return Math.min(...bounds);
}
