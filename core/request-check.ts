// The rules of a request that JSON Schema cannot state (two values in relation), each
// declared once as a value that both runs and documents itself: a door's operation lists
// its rules, the check runs them after the schema, and the documents (OpenAPI, OpenRPC,
// GraphQL descriptions) show `doc` as `x-cross-field-rules`. Also the one conversion of a
// day range (YYYY-MM-DD, inclusive, UTC) to block-time seconds, which every door that takes
// days (REST, GraphQL filters, exports) goes through. Door-neutral: errors name parameters
// as the caller gives them (a door passes its own names, or placeholders it words later).
import { QUOTED_PARAM_VALUE_MAX_CHARS } from './limits/questions.ts';
import { LAST_SECOND_OF_DAY } from './vocabulary/calendar.ts';
import type { Static, TObject } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError, Errors, invalidParams } from './errors.ts';
import { MAX_BLOCK_TIME } from './limits.ts';
import { resolveProtocols, type ProtocolAsk } from './protocol-scope.ts';
import { dayStart, NUMBER_FORMATS, ruleOfPattern, type DayWords } from './vocabulary/primitives.ts';

/** A request's values by name; a dotted name reads inside objects (`options.blockTime`). */
export type RequestValues = Readonly<Record<string, unknown>>;

/** A rule between parameters: what the documents show, and the check that refuses a request breaking it. */
export interface CrossFieldRule {
  /** As documented (`x-cross-field-rules`): the rule's name, its parameters and its bound. */
  readonly doc: Readonly<Record<string, unknown>>;
  /** Throws an invalid-params AppError naming the parameter when `values` break the rule. */
  check(values: RequestValues): void;
}

const given = (v: unknown): boolean => v !== undefined && v !== null;

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

/** An object with the schema's top-level defaults filled in where a value is absent (a default is stated once, in its schema). */
export function fillDefaults(schema: TObject, value: object | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(value ?? {}) };
  for (const [key, property] of Object.entries(schema.properties)) {
    if (out[key] === undefined && property.default !== undefined) out[key] = property.default;
  }
  return out;
}

/** Run every rule of a request, in the order declared: the first broken one is the error. */
export function checkRules(rules: readonly CrossFieldRule[], values: RequestValues): void {
  for (const r of rules) r.check(values);
}

/** The rules as the documents show them. */
export const rulesDoc = (rules: readonly CrossFieldRule[]): { 'x-cross-field-rules'?: Readonly<Record<string, unknown>>[] } =>
  rules.length === 0 ? {} : { 'x-cross-field-rules': rules.map((r) => r.doc) };

// ---- the one day range -------------------------------------------------------------------

/** A block-time range in Unix seconds, both bounds inclusive; an open side is absent. */
export interface SecondsRange {
  gte?: number;
  lte?: number;
}

/** How a door names the two days of a range in its errors (`field`: the parameter its
 *  errors carry, when not the day's own name), and words a refused day (the vocabulary's words unless given). */
export interface DayNames {
  from: string;
  to: string;
  field?: string;
  words?: DayWords;
}

/**
 * The one conversion of a day range to seconds: [from 00:00:00, to 23:59:59] UTC, each day a
 * real calendar day the store can hold (dayStart), the first not after the last (ordered).
 * The last storable day ends early, at MAX_BLOCK_TIME.
 */
export function daySpan(from: string | null | undefined, to: string | null | undefined, names: DayNames): SecondsRange {
  const day = (value: string, name: string): number => dayStart(value, name, names.words, names.field ?? name);
  const gte = given(from) ? day(from!, names.from) : undefined;
  const lte = given(to) ? Math.min(day(to!, names.to) + LAST_SECOND_OF_DAY, MAX_BLOCK_TIME) : undefined;
  ordered(names.from, names.to, names.field).check({ [names.from]: from, [names.to]: to });
  return { ...(gte === undefined ? {} : { gte }), ...(lte === undefined ? {} : { lte }) };
}

// ---- the one check of a request -----------------------------------------------------------

/** How a request names its protocols: protocol-scope's kinds (one: `protocol`; the others: `protocols`). */
export type ScopeKind = ProtocolAsk['kind'];

/**
 * An operation's request, declared once and door-neutral: its fields as one TypeBox schema
 * (`protocol` or `protocols`, `range` as block-time seconds, then its own: page, sort,
 * groupBy, metrics…), how its protocols are resolved, and its cross-field rules. Each door
 * derives its wire shape from it and maps what it receives back onto these names.
 */
export interface RequestDecl<S extends TObject = TObject> {
  readonly schema: S;
  readonly scope: ScopeKind;
  readonly rules: readonly CrossFieldRule[];
  /** The schema compiled once, when declared (defaults filled in as it validates). */
  readonly validate: ValidateFunction;
}

export function request<S extends TObject>(schema: S, scope: ScopeKind, rules: readonly CrossFieldRule[] = []): RequestDecl<S> {
  const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, verbose: true });
  for (const [name, format] of Object.entries(NUMBER_FORMATS)) ajv.addFormat(name, format);
  return { schema, scope, rules, validate: ajv.compile(schema) };
}

/** What a door hands the check: the request's values by the declaration's names, and its days, if it takes days. */
export interface RequestInput {
  values: Record<string, unknown>;
  days?: { from: string | null | undefined; to: string | null | undefined; names: DayNames };
}

/** A request that passed the check: its values, defaults filled, its protocols resolved and its range in seconds. */
export type CheckedRequest<S extends TObject = TObject> = Static<S> & { protocols: string[]; range: SecondsRange };

/**
 * The one check of a request, whichever door it came through (Cube's normalizeQuery is the
 * model): its days become seconds (daySpan), then the schema, the cross-field rules and the
 * protocol scope are run against the `active` protocols. `nameOf` words a field's path as
 * the door names it (`limit` is `options.limit` on JSON-RPC).
 */
export function checkRequest<S extends TObject>(
  decl: RequestDecl<S>,
  input: RequestInput,
  active: readonly string[],
  nameOf: (path: string) => string = (p) => p,
): CheckedRequest<S> {
  const values: Record<string, unknown> = { ...input.values };
  for (const [k, v] of Object.entries(values)) if (v === null || v === undefined) delete values[k];
  if (input.days !== undefined) {
    const range = daySpan(input.days.from, input.days.to, input.days.names);
    if (range.gte !== undefined || range.lte !== undefined) values.range = range;
  }
  if (!decl.validate(values)) throw schemaRefusal(decl.validate.errors?.[0], nameOf);
  // A scope of each protocol asked needs the list (a declaration may leave it optional).
  if (decl.scope === 'each' && values.protocols === undefined) throw invalidParams(`${nameOf('protocols')} is required`, nameOf('protocols'));
  // The range is in order whichever door it came through (a door's own check is not the
  // request's): before the declared rules, which count its buckets.
  ordered('range', undefined, nameOf('range')).check(values);
  checkRules(decl.rules, values);
  const ask: ProtocolAsk =
    decl.scope === 'one'
      ? { kind: 'one', name: values.protocol as string | undefined }
      : ({ kind: decl.scope, names: values.protocols as string[] } as ProtocolAsk);
  return { ...values, protocols: resolveProtocols(active, ask), range: (values.range as SecondsRange | undefined) ?? {} } as CheckedRequest<S>;
}

/** A violation's path as the door names it: its first step by `nameOf` (a door maps the
 *  request's top-level names), then `.member` and `[index]` (`filters.protocols[0]`). */
function pathName(steps: readonly string[], nameOf: (path: string) => string): string {
  const [head, ...rest] = steps;
  if (head === undefined) return 'request';
  return `${nameOf(head)}${rest.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('')}`;
}

/** A value as a refusal quotes it, cut short; a number JSON cannot write (Infinity) as itself. */
const quoted = (v: unknown): string =>
  (typeof v === 'number' && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? String(v))).slice(0, QUOTED_PARAM_VALUE_MAX_CHARS);

/** The first schema violation as invalid params naming the field in the door's words. */
function schemaRefusal(err: ErrorObject | undefined, nameOf: (path: string) => string): AppError {
  if (err === undefined) return invalidParams('the request is invalid', 'request');
  const p = err.params as Record<string, unknown>;
  const steps = err.instancePath.split('/').slice(1);
  const named = err.keyword === 'required' || err.keyword === 'additionalProperties';
  const field = pathName(named ? [...steps, String(p.missingProperty ?? p.additionalProperty)] : steps, nameOf);
  const got = ` (got ${quoted(err.data)})`;
  const rule = ruleOfPattern(p.pattern) ?? (err.parentSchema as { description?: string } | undefined)?.description;
  const words: Record<string, string> = {
    required: 'is required',
    additionalProperties: 'is not a field of this request',
    maximum: `must be at most ${String(p.limit)}${got}`,
    minimum: `must be at least ${String(p.limit)}${got}`,
    enum: `must be one of ${(p.allowedValues as unknown[] | undefined)?.join(', ')}${got}`,
    maxItems: `must hold at most ${String(p.limit)} items`,
    minItems: 'must not be empty; leave it out to apply no filter',
    // The primitive's rule in words (as every door words it), not its regular expression.
    pattern: `must be ${rule ?? `a string matching ${String(p.pattern)}`}${got}`,
    multipleOf: `must be a whole number${got}`,
    uniqueItems: `must not list the same value twice (items ${String(p.j)} and ${String(p.i)} are equal)`,
    maxLength: `must be at most ${String(p.limit)} characters long`,
  };
  return invalidParams(`${field} ${words[err.keyword] ?? `${err.message ?? 'is invalid'}${got}`}`, field);
}
