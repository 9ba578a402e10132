// Calling the catalog's methods by name: a method's positional params checked against the
// schema the catalog declares (the first violation becomes error data that names the field and
// the rule it broke, e.g. "options.limit must be at most 10000 (got 10001)"), each options
// object's declared defaults filled in, the declared handler run, and what the analytics layer
// throws after validation worded with the method's own parameter names. Every door that offers
// the methods as such (JSON-RPC's method table, MCP's tools) calls them through here, so an
// answer and an error read the same on each.
//
// Classification (documented in docs/json-rpc.md):
// - a filter that cannot be read at all (filters, or the blockTime range object, or any
//   member inside them has the wrong JSON type) is -32000 "Server error", which is what
//   SPEC assigns to an unparsable filter;
// - every other violation (missing or unknown fields, values out of range, unknown enum
//   values, malformed Base58, gte after lte) is -32602 "Invalid params".
import { QUOTED_PARAM_VALUE_MAX_CHARS } from '../../../core/limits/questions.ts';
import type { TObject, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError, Errors, worded, type Wording } from '../../../core/errors.ts';
import { INT64, NUMBER_FORMATS, ruleOfPattern } from '../../../core/vocabulary/primitives.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { fillDefaults } from '../../../core/request-check.ts';
import { checkRules, type RequestValues } from '../../../core/request-rules.ts';
import type { Operation, ParamsCheck, Positional, RpcMethod } from '../../catalog/declare.ts';

// ---- calling a method --------------------------------------------------------------------

/** Where a position's schema holds a property named `key` (`options.filters.protocols`), the first found breadth-first. */
function pathTo(params: readonly Positional[], key: string): string | undefined {
  const queue: [string, TSchema][] = params.map((p) => [p.name, p.schema]);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [path, schema] = next;
    const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
    if (key in props) return `${path}.${key}`;
    for (const [k, s] of Object.entries(props)) queue.push([`${path}.${k}`, s]);
  }
  return undefined;
}

/**
 * How a method's callers see the analytics layer's logical parameters, read from the
 * method's own params: where its options name one protocol, a list of them (a comparison's
 * `options.protocols`, a listing's `options.filters.protocols`) and the range.
 */
export function methodWording(m: RpcMethod): Wording {
  return {
    params: {
      protocol: pathTo(m.params, 'protocolName') ?? 'options.protocolName',
      protocols: pathTo(m.params, 'protocols') ?? 'options.protocols',
      range: 'blockTime',
      cursor: 'paginationToken',
      order: 'sortOrder',
    },
    hints: { protocols: 'getProtocols lists the available ones', coarserBucket: 'interval "day"' },
  };
}

/** The catalog's methods, by name: look up, validate, run. */
export class CatalogMethods {
  private readonly methods: ReadonlyMap<string, { m: RpcMethod; check: ParamsCheck; wording: Wording }>;

  /** `catalog`: the service's (api/catalog/catalog.ts CATALOG), or a test's own. */
  constructor(catalog: readonly Operation[]) {
    const methods = catalog.flatMap((op) => (op.rpc ? [op.rpc] : []));
    const checks = paramsChecks(methods);
    this.methods = new Map(methods.map((m) => [m.method, { m, check: checks.get(m.method)!, wording: methodWording(m) }]));
  }

  has(name: string): boolean {
    return this.methods.has(name);
  }

  /** The declared methods, in the catalog's order. */
  list(): RpcMethod[] {
    return [...this.methods.values()].map((e) => e.m);
  }

  /** Run `name` with its positional `params` on `analytics` (the asking request's view, under its
   *  budget); throws the door-neutral AppError of a bad param or a failed read. */
  async call(analytics: Analytics, name: string, params: readonly unknown[]): Promise<unknown> {
    const entry = this.methods.get(name);
    if (!entry) throw new Error(`unknown method ${name}`);
    // Validation words its errors with the positions' names already; only what the
    // analytics layer throws after it (logical keys) is worded for this method.
    const check: ParamsCheck = entry.check;
    check(entry.m.schema, params);
    try {
      return await entry.m.run(analytics, withDefaults(entry.m.params, params));
    } catch (err) {
      throw worded(err, entry.wording);
    }
  }
}

const isObjectSchema = (s: TSchema): s is TObject => s.type === 'object' && typeof s.properties === 'object';

/** Checked params with each options object's defaults filled in (what a declared handler receives, declare.ts ArgsOf). */
function withDefaults(positions: readonly Positional[], args: readonly unknown[]): unknown[] {
  return positions.map((p, i) => {
    const value: unknown = args[i];
    return isObjectSchema(p.schema) && (typeof value === 'object' || value === undefined) ? fillDefaults(p.schema, value) : value;
  });
}

// ---- checking a method's params ------------------------------------------------------------

/** Positional params by their positions' names, as the rules read them. */
const byName = (params: readonly Positional[], args: readonly unknown[]): RequestValues => Object.fromEntries(params.map((p, i) => [p.name, args[i]]));

const shown = (v: unknown): string => {
  // JSON writes Infinity (what JSON.parse makes of 1e400) as null: quote it as itself.
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    // Defence in depth (params depth is bounded before validation): never fail while quoting.
    return Array.isArray(v) ? 'an array' : typeof v;
  }
  return s === undefined ? String(v) : s.length > QUOTED_PARAM_VALUE_MAX_CHARS ? `${s.slice(0, QUOTED_PARAM_VALUE_MAX_CHARS - 3)}...` : s;
};

/** "/1/filters/protocols/0" -> "options.filters.protocols[0]" using the positional names. */
function fieldName(instancePath: string, names: readonly string[]): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (parts.length === 0) return 'params';
  const [first, ...rest] = parts;
  let out = names[Number(first)] ?? `params[${first}]`;
  for (const p of rest) out += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  return out;
}

/** Is this path inside a filter (the filters object or a blockTime range)? */
const inFilter = (instancePath: string): boolean => /\/(filters|blockTime)(\/|$)/.test(instancePath);

function describe(err: ErrorObject, names: readonly string[], method: string): AppError {
  const field = fieldName(err.instancePath, names);
  const p = err.params as Record<string, unknown>;
  const got = ` (got ${shown(err.data)})`;
  const invalid = (message: string, f = field): AppError => new AppError(Errors.invalidParams, message, { field: f });
  switch (err.keyword) {
    case 'type': {
      // A number past ±1.8e308 parses as Infinity: a value out of range, not a filter of the wrong type.
      if (typeof err.data === 'number' && !Number.isFinite(err.data))
        return invalid(`${field} must be a finite number${got}; JSON numbers past ±1.8e308 are read as Infinity`);
      const message = `${field} must be ${String(p.type).replace(',', ' or ')}${got}`;
      if (inFilter(err.instancePath)) {
        return new AppError(Errors.unparsableFilter, `unparsable filter: ${message}`, { field });
      }
      return invalid(message);
    }
    case 'required': {
      const missing = String(p.missingProperty);
      return invalid(`${field === 'params' ? missing : `${field}.${missing}`} is required`, `${field}.${missing}`);
    }
    case 'minItems':
      if (err.instancePath === '') {
        // The first position the caller left out is the one to name.
        const at = Array.isArray(err.data) ? err.data.length : 0;
        const name = names[at] ?? 'params';
        return invalid(`${name} (params[${at}]) is required`, name);
      }
      return invalid(`${field} must not be empty; omit it to apply no filter`);
    case 'maxItems':
    case 'additionalItems':
      if (err.instancePath === '') {
        return invalid(
          `${method} takes at most ${names.length} positional parameter${names.length === 1 ? '' : 's'}${names.length ? ` (${names.join(', ')})` : ''}`,
        );
      }
      return invalid(`${field} must hold at most ${String(p.limit)} items`);
    case 'additionalProperties': {
      const extra = String(p.additionalProperty);
      return invalid(`${field}.${extra} is not an accepted field of ${field} for ${method}`, `${field}.${extra}`);
    }
    case 'enum':
      return invalid(`${field} must be one of ${(p.allowedValues as unknown[]).map((v) => shown(v)).join(', ')}${got}`);
    case 'maximum':
      return invalid(`${field} must be at most ${String(p.limit)}${got}`);
    case 'minimum':
      return invalid(`${field} must be at least ${String(p.limit)}${got}`);
    case 'multipleOf':
      return invalid(`${field} must be a whole number${got}`);
    case 'format':
      if (p.format === INT64) return invalid(`${field} must be a whole number${got}`);
      return invalid(`${field} ${err.message ?? 'is invalid'}`);
    case 'pattern': {
      const rule =
        ruleOfPattern(p.pattern) ?? (err.parentSchema as { description?: string } | undefined)?.description ?? `a string matching ${String(p.pattern)}`;
      return invalid(`${field} must be ${rule}${got}`);
    }
    case 'minLength':
      return invalid(`${field} must not be empty`);
    case 'maxLength':
      return invalid(`${field} must be at most ${String(p.limit)} characters long`);
    case 'uniqueItems':
      return invalid(`${field} must not list the same value twice (items ${String(p.j)} and ${String(p.i)} are equal)`);
    default:
      return invalid(`${field} ${err.message ?? 'is invalid'}`);
  }
}

/** Throws an AppError (-32602 or -32000) on the first violation of `validate`, then of the
 *  method's cross-field rules (its ranges in order), which a schema cannot express. */
function check(validate: ValidateFunction, m: RpcMethod, params: unknown): void {
  if (!validate(params)) {
    const first = validate.errors?.[0];
    if (!first) throw new AppError(Errors.invalidParams, 'params are invalid', { field: 'params' });
    throw describe(
      first,
      m.params.map((p) => p.name),
      m.method,
    );
  }
  if (Array.isArray(params)) checkRules(m.rules, byName(m.params, params));
}

/**
 * The door's params checks of `methods` by method name, each compiled once from the method's
 * own schema (the one the catalog documents); a check refuses to vouch for any other schema.
 */
export function paramsChecks(methods: Iterable<RpcMethod>): ReadonlyMap<string, ParamsCheck> {
  // strictTuples off: trailing positional params are optional, which strict tuples forbid.
  const ajv = new Ajv({ allErrors: false, strict: true, strictTuples: false, verbose: true });
  for (const [name, format] of Object.entries(NUMBER_FORMATS)) ajv.addFormat(name, format);
  return new Map(
    [...methods].map((m) => {
      const validate = ajv.compile(m.schema);
      const checkOf: ParamsCheck = (schema, params) => {
        if (schema !== m.schema) throw new Error(`the params check of ${m.method} was asked about another schema`);
        check(validate, m, params);
      };
      return [m.method, checkOf];
    }),
  );
}

/** Is `value` nested deeper than `limit` levels of arrays and objects? Iterative, and it
 *  stops at the first path that is too deep, so a hostile value costs little. */
export function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
