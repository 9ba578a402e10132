// The rules of a request that JSON Schema cannot state (values in relation), each declared
// once as a value that both runs and documents itself: an operation lists its rules, the
// one check (request-check.ts) runs them after the schema, and the documents (OpenAPI,
// OpenRPC, GraphQL descriptions) show `doc` as `x-cross-field-rules`. Door-neutral: a rule
// names fields by the request's paths, worded by the door's `nameOf` where it has one.
import { AppError, Errors, invalidParams } from './errors.ts';

/** A request's values by name; a dotted name reads inside objects (`options.blockTime`). */
export type RequestValues = Readonly<Record<string, unknown>>;

/** A rule between parameters: what the documents show, and the check that refuses a request breaking it. */
export interface CrossFieldRule {
  /** As documented (`x-cross-field-rules`): the rule's name, its parameters and its bound. */
  readonly doc: Readonly<Record<string, unknown>>;
  /** Throws an invalid-params AppError naming the parameter when `values` break the rule;
   *  `nameOf` words a field as the door names it (the rules below that name nested fields use it). */
  check(values: RequestValues, nameOf?: (path: string) => string): void;
}

/** Whether a value was given (null is not a value here). */
export const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** The value at a dotted name, or undefined when a step is missing. Own properties only: a
 *  name such as `constructor` or `range.toString` reads nothing from a prototype. */
export function valueAt(values: RequestValues, name: string): unknown {
  if (Object.hasOwn(values, name)) return values[name];
  let v: unknown = values;
  for (const step of name.split('.')) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, step)) return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}

/**
 * `from` is not after `to` (two parameters: days or numbers), or, given one name, the range
 * object there has `gte` not after `lte`. `field` is the parameter the error names (`from`,
 * or the range, unless given).
 */
export function ordered(from: string, to?: string, field?: string): CrossFieldRule {
  if (to === undefined) {
    return {
      doc: { rule: 'ordered', params: [`${from}.gte`, `${from}.lte`] },
      check(values) {
        const r = valueAt(values, from) as { gte?: unknown; lte?: unknown } | undefined;
        if (r === null || typeof r !== 'object' || !given(r.gte) || !given(r.lte) || (r.gte as number) <= (r.lte as number)) return;
        const shown = field ?? from;
        throw new AppError(Errors.invalidParams, `${shown}.gte must not be later than ${shown}.lte (got gte ${String(r.gte)}, lte ${String(r.lte)})`, {
          field: shown,
        });
      },
    };
  }
  return {
    doc: { rule: 'ordered', params: [from, to] },
    check(values) {
      const a = valueAt(values, from) as string | number | undefined;
      const b = valueAt(values, to) as string | number | undefined;
      // Fails closed: values that do not compare (NaN) are not in order either.
      if (given(a) && given(b) && !(a! <= b!)) throw invalidParams(`${from} (${String(a)}) is after ${to} (${String(b)})`, field ?? from);
    },
  };
}

/** `ordered(from, to)` over a request body: its document names the dotted paths `fields`
 *  (a query's rules name `params`), as the fuzzer's hook and other readers take them. */
export function orderedFields(from: string, to: string, field?: string): CrossFieldRule {
  return { ...ordered(from, to, field), doc: { rule: 'ordered', fields: [from, to] } };
}

/** `a` + `b` is at most `maximum`; `advice` says how to ask for more. The error names `a`. */
export function sumAtMost(a: string, b: string, maximum: number, advice: string): CrossFieldRule {
  return {
    doc: { rule: 'sumAtMost', params: [a, b], maximum },
    check(values) {
      const sum = Number(valueAt(values, a) ?? 0) + Number(valueAt(values, b) ?? 0);
      // Fails closed: a sum that is not a number (a value that is not one) is not at most anything.
      if (!(sum <= maximum)) throw invalidParams(`${a} + ${b} must be at most ${maximum} (got ${sum}); ${advice}`, a);
    },
  };
}

/** `param` is a token only the server mints (`by`), and is not given with a non-zero `not`. */
export function issued(param: string, by: string, not: string, why: string): CrossFieldRule {
  return {
    doc: { rule: 'issued', param, by },
    check(values) {
      const other = valueAt(values, not);
      if (given(valueAt(values, param)) && given(other) && other !== 0) throw invalidParams(`${param} and ${not} cannot be combined: ${why}; drop ${not}`, not);
    },
  };
}

/**
 * The span from `from` to `to`, in buckets of the size `per.param` names, is at most
 * `maximum`: documented as days times buckets per day; run by `run`, which counts the buckets
 * with the analytics layer's one bucket count (it knows calendars; this layer does not).
 */
export function spanAtMost(
  from: string,
  to: string,
  per: { param: string } & Record<string, number | string>,
  maximum: number,
  run: (values: RequestValues) => void,
): CrossFieldRule {
  return { doc: { rule: 'spanAtMost', params: [from, to], perDay: per, maximum }, check: run };
}

/** The numbers of the object at `field` (its `parts`, an absent one 0) sum to `value`, within `tolerance`. */
export function sumEquals(field: string, parts: readonly string[], value: number, tolerance: number): CrossFieldRule {
  return {
    doc: { rule: 'sumEquals', property: field, value, tolerance },
    check(values, nameOf = (p) => p) {
      const o = valueAt(values, field) as Record<string, unknown> | undefined;
      if (o === undefined || o === null) return;
      const sum = parts.reduce((acc, k) => acc + Number(o[k] ?? 0), 0);
      if (Math.abs(sum - value) > tolerance) throw invalidParams(`${nameOf(field)} must sum to ${value} (${parts.join(' + ')} = ${sum})`, nameOf(field));
    },
  };
}

/** Each item of the lists at `fields` is among the list at `of` (`whole` when that is absent), which `words` names. */
export function subsetOf(fields: readonly string[], of: string, whole: readonly string[], words: string): CrossFieldRule {
  return {
    doc: { rule: 'subsetOf', fields: [...fields], of },
    check(values, nameOf = (p) => p) {
      const among = (valueAt(values, of) as readonly string[] | undefined) ?? whole;
      for (const f of fields) {
        for (const [i, item] of ((valueAt(values, f) as readonly string[] | undefined) ?? []).entries()) {
          if (!among.includes(item)) throw invalidParams(`${nameOf(`${f}.${i}`)} ${JSON.stringify(item)} is not among ${words}; add it to ${of}`, nameOf(f));
        }
      }
    },
  };
}

/** `field` is given only when `when` (absent: `otherwise`) equals `equals`. */
export function onlyWith(field: string, when: string, equals: string, otherwise: string): CrossFieldRule {
  return {
    doc: { rule: 'onlyWith', field, when, equals },
    check(values, nameOf = (p) => p) {
      if (!given(valueAt(values, field)) || (valueAt(values, when) ?? otherwise) === equals) return;
      throw invalidParams(`${nameOf(field)} is for ${when.split('.').pop()} ${equals}`, nameOf(field));
    },
  };
}

/** `field` is not `value` here, for the reason `why` gives. */
export function notValue(field: string, value: string, why: string): CrossFieldRule {
  return {
    doc: { rule: 'notValue', field, value },
    check(values, nameOf = (p) => p) {
      if (valueAt(values, field) === value) throw invalidParams(`${nameOf(field)} ${value} ${why}`, nameOf(field));
    },
  };
}

/** A rule that a later layer runs (the SQL guard), declared here so that the documents show it. */
export const ranBy = (doc: Readonly<Record<string, unknown>>): CrossFieldRule => ({ doc, check() {} });

/** Run every rule of a request, in the order declared: the first broken one is the error. */
export function checkRules(rules: readonly CrossFieldRule[], values: RequestValues, nameOf?: (path: string) => string): void {
  for (const r of rules) r.check(values, nameOf);
}

/** The rules as the documents show them. */
export const rulesDoc = (rules: readonly CrossFieldRule[]): { 'x-cross-field-rules'?: Readonly<Record<string, unknown>>[] } =>
  rules.length === 0 ? {} : { 'x-cross-field-rules': rules.map((r) => r.doc) };

// ---- rules of lists, pages and bounds --------------------------------------------------------

/** The name of `path` in a refusal: the door's (`nameOf`), or `path` itself. */
type NameOf = (path: string) => string;
const asIs: NameOf = (p) => p;

/**
 * Each item of the list at `field` is named once. With `same` (the item's identity, and what
 * an item is called), two names of one thing count once too: a renamed metric's old and new
 * names. The refusal names the later item by its index.
 */
export function distinctItems(field: string, same?: { of: (item: string) => string | undefined; what: string }): CrossFieldRule {
  return {
    doc: { rule: 'distinctItems', field, ...(same === undefined ? {} : { same: same.what }) },
    check(values, nameOf = asIs) {
      const items = (valueAt(values, field) as readonly string[] | undefined) ?? [];
      const id = (item: string): string => same?.of(item) ?? item;
      for (const [i, item] of items.entries()) {
        const first = items.findIndex((x) => id(x) === id(item));
        if (first === i) continue;
        const at = nameOf(`${field}.${i}`);
        if (items[first] === item) throw invalidParams(`${at}: ${item} is listed twice; name each value once`, nameOf(field));
        throw invalidParams(`${at}: ${item} is the ${same!.what} ${items[first]} names; name it once`, nameOf(field));
      }
    },
  };
}

/** A refusal's words with each `{path}` as the door names that field, and `{value}` as the value refused. */
const worded = (words: string, nameOf: NameOf, value?: unknown): string =>
  words.replace(/\{([\w.]+)\}/g, (_m, path: string) => (path === 'value' ? String(value) : nameOf(path)));

/** A rule's case, when it holds in one only: any of the fields given, or none of them (an empty list is not given). */
export type When = { anyGiven: readonly string[] } | { noneGiven: readonly string[] };

const asked = (v: unknown): boolean => given(v) && !(Array.isArray(v) && v.length === 0);
const holds = (when: When | undefined, values: RequestValues): boolean =>
  when === undefined || ('anyGiven' in when ? when.anyGiven.some((f) => asked(valueAt(values, f))) : !when.noneGiven.some((f) => asked(valueAt(values, f))));

/**
 * `a` and `b` are not both given (Relay's `first` with `last`), in every case or `when` it
 * holds. `words` say why, naming fields as `{path}` (the door's names); the refusal names `b`.
 */
export function notTogether(a: string, b: string, words: string, when?: When): CrossFieldRule {
  return {
    doc: { rule: 'notTogether', params: [a, b], ...(when === undefined ? {} : { when }) },
    check(values, nameOf = asIs) {
      if (holds(when, values) && given(valueAt(values, a)) && given(valueAt(values, b))) throw invalidParams(worded(words, nameOf), nameOf(b));
    },
  };
}

/**
 * `field`, when given, is among `among` `when` the case holds (a listing's sorts without
 * groups). `words` say why, naming fields as `{path}` and the value as `{value}`.
 */
export function amongWhen(field: string, among: readonly string[], when: When, words: string): CrossFieldRule {
  return {
    doc: { rule: 'amongWhen', field, among: [...among], when },
    check(values, nameOf = asIs) {
      const v = valueAt(values, field);
      if (!given(v) || !holds(when, values) || among.includes(v as string)) return;
      throw invalidParams(worded(words, nameOf, v), nameOf(field));
    },
  };
}

/**
 * A value of `field` that `needs` lists is given `when` the case holds only with one of its
 * items in the list at `list` (a sort by a key needs that key grouped by). `words` as amongWhen's.
 */
export function needsOneOf(field: string, list: string, needs: Readonly<Record<string, readonly string[]>>, when: When, words: string): CrossFieldRule {
  return {
    doc: { rule: 'needsOneOf', field, list, needs, when },
    check(values, nameOf = asIs) {
      const v = valueAt(values, field);
      if (typeof v !== 'string' || !Object.hasOwn(needs, v) || !holds(when, values)) return;
      const items = (valueAt(values, list) as readonly string[] | undefined) ?? [];
      if (!needs[v]!.some((n) => items.includes(n))) throw invalidParams(worded(words, nameOf, v), nameOf(field));
    },
  };
}

/** A whole number written in decimal digits, compared exactly (past 2^53 too); anything else is not one. */
const wholeOf = (v: unknown): bigint | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : undefined;

/**
 * The bounds object at `field` has `min` not above `max`, both whole numbers compared exactly
 * (as BigInt: slots and fees run past 2^53). A bound that is not a whole number is the
 * schema's to refuse.
 */
export function boundsInOrder(field: string): CrossFieldRule {
  return {
    doc: { rule: 'ordered', params: [`${field}.min`, `${field}.max`], compare: 'integer' },
    check(values, nameOf = asIs) {
      const min = wholeOf(valueAt(values, `${field}.min`));
      const max = wholeOf(valueAt(values, `${field}.max`));
      if (min !== undefined && max !== undefined && min > max)
        throw invalidParams(`${nameOf(`${field}.min`)} (${min}) is above its max (${max})`, nameOf(field));
    },
  };
}

/**
 * Two fields that say one thing agree when both are given: `field`'s value is the one `means`
 * gives for `other`'s (`success` true is `status` SUCCEEDED). A value `means` does not list
 * says nothing of `field` (`status` ALL).
 */
export function agrees(field: string, other: string, means: Readonly<Record<string, unknown>>): CrossFieldRule {
  return {
    doc: { rule: 'agrees', params: [field, other], means },
    check(values, nameOf = asIs) {
      const [v, o] = [valueAt(values, field), valueAt(values, other)];
      if (!given(v) || typeof o !== 'string' || !Object.hasOwn(means, o) || means[o] === v) return;
      throw invalidParams(`${nameOf(field)} (${String(v)}) contradicts ${nameOf(other)} (${o})`, nameOf(field));
    },
  };
}
