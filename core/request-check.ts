// The one check of a request, whichever door it came through: its days converted (the one
// conversion of a day range, YYYY-MM-DD inclusive UTC, to block-time seconds, which every
// door that takes days goes through), then its schema, its cross-field rules
// (request-rules.ts) and its protocol scope. Door-neutral: errors name parameters as the
// caller gives them (a door passes its own names, or placeholders it words later).
import { QUOTED_NUMBER_MAX_CHARS, QUOTED_PARAM_VALUE_MAX_CHARS } from './limits/questions.ts';
import { LAST_SECOND_OF_DAY } from './vocabulary/calendar.ts';
import type { Static, TObject } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError, invalidParams, quoted } from './errors.ts';
import { MAX_BLOCK_TIME } from './limits/questions.ts';
import { resolveProtocols, type ProtocolAsk } from './protocol-scope.ts';
import { checkRules, given, ordered, valueAt, type CrossFieldRule, type RequestValues } from './request-rules.ts';
import { dayStart, DECIMAL_FORMATS, NUMBER_FORMATS, ruleOfLengths, ruleOfPattern, type DayWords } from './vocabulary/primitives.ts';

/** An object with the schema's top-level defaults filled in where a value is absent (a default is stated once, in its schema). */
export function fillDefaults(schema: TObject, value: object | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(value ?? {}) };
  for (const [key, property] of Object.entries(schema.properties)) {
    if (out[key] === undefined && property.default !== undefined) out[key] = property.default;
  }
  return out;
}

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
  /** Where a body names its protocols and its days, when not at the top (see RequestPlaces). */
  readonly places?: RequestPlaces;
  /** The schema compiled once, when declared (defaults filled in as it validates). */
  readonly validate: ValidateFunction;
}

/**
 * Where a request whose fields are one nested body (an export's `filters: {protocols,
 * dateRange: {start, end}}`) holds its protocols and its days: the check reads them there,
 * converts the days with daySpan after the schema (which holds them as CalendarDays), and
 * words a protocol refusal by that place (its placeholder, `⟨filters.protocols[1]⟩`).
 */
export interface RequestPlaces {
  protocols?: string;
  days?: { at: string; from: string; to: string; names: DayNames };
}

export function request<S extends TObject>(schema: S, scope: ScopeKind, rules: readonly CrossFieldRule[] = [], places?: RequestPlaces): RequestDecl<S> {
  const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, verbose: true });
  for (const [name, format] of Object.entries({ ...NUMBER_FORMATS, ...DECIMAL_FORMATS })) ajv.addFormat(name, format);
  return { schema, scope, rules, ...(places === undefined ? {} : { places }), validate: ajv.compile(schema) };
}

/** What a door hands the check: the request's values by the declaration's names, and its days, if it takes days. */
export interface RequestInput {
  values: Record<string, unknown>;
  days?: { from: string | null | undefined; to: string | null | undefined; names: DayNames };
}

/** A request that passed the check: its values, defaults filled, its protocols resolved and its range in seconds;
 *  `protocolsAsked`: the names as the request gave them, if it did (a listing's cursor is bound to its filters as asked). */
export type CheckedRequest<S extends TObject = TObject> = Static<S> & { protocols: string[]; protocolsAsked?: readonly string[]; range: SecondsRange };

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
  const placed = daysAt(values, decl.places?.days);
  // Before the schema, as a door's days are: the calendar's words, not the day pattern's.
  const range = placed === undefined ? {} : daySpan(placed.from, placed.to, placed.names);
  if (!decl.validate(values)) throw schemaRefusal(decl.validate.errors?.[0], nameOf);
  if (range.gte !== undefined || range.lte !== undefined) values.range = range;
  const at = decl.places?.protocols ?? 'protocols';
  // A scope of each protocol asked needs the list (a declaration may leave it optional).
  if (decl.scope === 'each' && valueAt(values, at) === undefined) throw invalidParams(`${nameOf(at)} is required`, nameOf(at));
  // The range is in order whichever door it came through (a door's own check is not the
  // request's): before the declared rules, which count its buckets.
  ordered('range', undefined, nameOf('range')).check(values);
  checkRules(decl.rules, values, nameOf);
  const ask: ProtocolAsk =
    decl.scope === 'one'
      ? { kind: 'one', name: values.protocol as string | undefined }
      : ({ kind: decl.scope, names: valueAt(values, at) as string[] } as ProtocolAsk);
  // The protocols as the caller gave them: a listing's cursor is bound to those.
  const asked = decl.scope === 'one' ? undefined : (valueAt(values, at) as string[] | undefined);
  return {
    ...values,
    protocols: scoped(active, ask, at),
    ...(asked === undefined ? {} : { protocolsAsked: asked }),
    range: (values.range as SecondsRange | undefined) ?? {},
  } as CheckedRequest<S>;
}

/** A body's days at their place, when they are days to convert (text or absent, in an object);
 *  any other shape is left to the schema, which refuses it in its own words. */
function daysAt(values: RequestValues, days: RequestPlaces['days']): { from?: string; to?: string; names: DayNames } | undefined {
  const d = days === undefined ? undefined : valueAt(values, days.at);
  if (days === undefined || typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  const [from, to] = [(d as Record<string, unknown>)[days.from], (d as Record<string, unknown>)[days.to]];
  if (![from, to].every((v) => v === undefined || typeof v === 'string')) return undefined;
  return { from: from as string | undefined, to: to as string | undefined, names: days.names };
}

/** The protocols resolved; a refusal names them by their place in the request when that is not `protocols`. */
function scoped(active: readonly string[], ask: ProtocolAsk, at: string): string[] {
  try {
    return resolveProtocols(active, ask);
  } catch (err) {
    if (at === 'protocols' || !(err instanceof AppError)) throw err;
    throw new AppError(err.kind, err.message.replace(`\u27e8protocols`, `\u27e8${at}`), { field: at });
  }
}

/** A violation's path as the door names it: its first step by `nameOf` (a door maps the
 *  request's top-level names), then `.member` and `[index]` (`filters.protocols[0]`). */
function pathName(steps: readonly string[], nameOf: (path: string) => string): string {
  const [head, ...rest] = steps;
  if (head === undefined) return nameOf('') || 'request';
  return `${nameOf(head)}${rest.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('')}`;
}

/** The first schema violation as invalid params naming the field in the door's words. */
function schemaRefusal(err: ErrorObject | undefined, nameOf: (path: string) => string): AppError {
  if (err === undefined) return invalidParams('the request is invalid', 'request');
  const p = err.params as Record<string, unknown>;
  const steps = err.instancePath.split('/').slice(1);
  const own = declaredRefusal(err, nameOf);
  if (own !== undefined) {
    const field = pathName(err.keyword === 'required' ? [...steps, String(p.missingProperty)] : steps, nameOf);
    return invalidParams(`${field} ${own}`, field);
  }
  if (err.keyword === 'uniqueItems') {
    // The first item that repeats an earlier one (ajv names a pair found from the end).
    const seen = new Set<string>();
    const items = err.data as unknown[];
    const i = items.findIndex((x) => seen.size === seen.add(JSON.stringify(x)).size);
    const field = pathName([...steps, String(i)], nameOf);
    return invalidParams(`${field} ${quoted(items[i])} is listed twice`, field);
  }
  const named = err.keyword === 'required' || err.keyword === 'additionalProperties';
  const field = pathName(named ? [...steps, String(p.missingProperty ?? p.additionalProperty)] : steps, nameOf);
  const got = ` (got ${quoted(err.data)})`;
  // A primitive's rule in the vocabulary's words ("a Base58 signature of 64-88 characters"), whichever part of it broke.
  const schema = err.parentSchema as { pattern?: unknown; description?: string } | undefined;
  const rule = ruleOfPattern(schema?.pattern ?? p.pattern);
  // A primitive stated by its lengths alone (an instruction type): its rule, for either length.
  const lengths = ruleOfLengths(schema);
  const broken = `must be ${rule}${got}`;
  const words: Record<string, string> = {
    ...(rule === undefined ? {} : { pattern: broken, minLength: broken, maxLength: broken }),
    required: 'is required',
    additionalProperties: 'is not a field of this request',
    maximum: `must be at most ${String(p.limit)}${got}`,
    minimum: `must be at least ${String(p.limit)}${got}`,
    enum: `must be one of ${(p.allowedValues as unknown[] | undefined)?.join(', ')}${got}`,
    maxItems: `may hold at most ${String(p.limit)} entries (got ${Array.isArray(err.data) ? err.data.length : '?'})`,
    minItems: 'must not be empty; leave it out to apply no filter',
    // The primitive's rule in words (as every door words it), not its regular expression.
    pattern: `must be ${rule ?? schema?.description ?? `a string matching ${String(p.pattern)}`}${got}`,
    multipleOf: `must be a whole number${got}`,
    maxLength: `must be at most ${String(p.limit)} characters long`,
    ...(lengths === undefined ? {} : { minLength: `must be ${lengths}${got}`, maxLength: `must be ${lengths}${got}` }),
  };
  return invalidParams(`${field} ${words[err.keyword] ?? `${err.message ?? 'is invalid'}${got}`}`, field);
}

/**
 * A field's own words for a refusal, declared beside its schema as `x-refusal`: one text for
 * every keyword, or a text per keyword (`{enum: '{value} is not an exportable column'}`); the
 * field's name leads it. `{value}` is the value refused (`{number}` unquoted), `{name}` a property that is not one,
 * any other `{path}` a field of the request as the door names it (`{page.after}`).
 */
function declaredRefusal(err: ErrorObject, nameOf: (path: string) => string): string | undefined {
  const declared = (err.parentSchema as { 'x-refusal'?: string | Record<string, string> } | undefined)?.['x-refusal'];
  const text = typeof declared === 'string' ? declared : declared?.[err.keyword];
  if (text === undefined) return undefined;
  const name = String((err.params as { additionalProperty?: unknown }).additionalProperty ?? '').slice(0, QUOTED_PARAM_VALUE_MAX_CHARS);
  // `{number}`: a number written as text (a BigInt bound), shown as the number it is, cut short.
  const own: Record<string, string> = { value: quoted(err.data) ?? '', number: String(err.data).slice(0, QUOTED_NUMBER_MAX_CHARS), name };
  return text.replace(/\{([\w.]+)\}/g, (_m, key: string) => own[key] ?? nameOf(key));
}
