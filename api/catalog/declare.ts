// How an operation of the catalog is declared: its names on each door, its parameters as
// TypeBox schemas (JSON Schema and TypeScript type in one), its answer, the facade method it
// runs and its cost. The doors are derived from these declarations (docs/architecture.md,
// "The catalog"); nothing here knows how a door validates or words an error.
import { Type, type Static, type TObject, type TOptionalWithFlag, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { fillDefaults, type CheckedRequest, type RequestDecl } from '../../core/request-check.ts';
import { ordered, type CrossFieldRule } from '../../core/request-rules.ts';
import type { Analytics, Prepared } from '../analytics/analytics.ts';

// ---- JSON-RPC: positional params ---------------------------------------------------------

/** One positional parameter of a JSON-RPC method; `name` labels its position in error data. */
export interface Positional<S extends TSchema = TSchema, R extends boolean = boolean> {
  readonly name: string;
  readonly schema: S;
  readonly required: R;
  /** SPEC's words for it. */
  readonly description: string;
}

export const required = <S extends TSchema>(name: string, schema: S, description: string): Positional<S, true> => ({
  name,
  schema,
  required: true,
  description,
});
export const optional = <S extends TSchema>(name: string, schema: S, description: string): Positional<S, false> => ({
  name,
  schema,
  required: false,
  description,
});

/** An optional position may also be null: JSON-RPC clients often fill unused positions so. */
type CheckedOf<P> = P extends Positional<infer S, true> ? Static<S> : P extends Positional<infer S, false> ? Static<S> | null | undefined : never;
/** The params as validated, typed from their positions. */
export type CheckedArgs<P extends readonly Positional[]> = { -readonly [K in keyof P]: CheckedOf<P[K]> };
/** An options object reaches the handler with its defaults filled in (absent or null: all defaults). */
type ArgOf<P> = P extends Positional<infer S extends TObject> ? Filled<S> : CheckedOf<P>;
/** The params a method's handler receives. */
export type ArgsOf<P extends readonly Positional[]> = { -readonly [K in keyof P]: ArgOf<P[K]> };

/**
 * The schema of a method's params array: one item per position, the required ones first
 * (trailing positions may be left out), nothing beyond. Optional object positions accept
 * null too. This is the schema validated and the one documented (OpenRPC), so the type of
 * what it accepts (CheckedArgs) is declared here, with the schema it stands for.
 */
export function positionalSchema<const P extends readonly Positional[]>(params: P): TUnsafe<CheckedArgs<P>> {
  const items = positionSchemas(params);
  const minItems = params.filter((p) => p.required).length;
  return Type.Unsafe<CheckedArgs<P>>(
    items.length === 0 ? { type: 'array', maxItems: 0 } : { type: 'array', items, minItems, maxItems: items.length, additionalItems: false },
  );
}

/** Each position's schema as validated: an optional object position accepts null too. */
export const positionSchemas = (params: readonly Positional[]): TSchema[] =>
  params.map((p) => (!p.required && p.schema.type === 'object' ? { ...p.schema, type: ['object', 'null'] } : p.schema));

/** A door's params check: returns only when `params` is valid for `schema`, else throws the door's error. */
export type ParamsCheck = <S extends TSchema>(schema: S, params: unknown) => asserts params is Static<S>;

/** A JSON-RPC method as the door sees it, types erased. positional-calls.ts (api/services/positional/) calls it: the params
 *  checked against `schema`, each options object's defaults filled in, then `run`. */
export interface RpcMethod {
  readonly method: string;
  readonly params: readonly Positional[];
  /** The params array's schema (positionalSchema). */
  readonly schema: TSchema;
  readonly result: TSchema;
  /** Its cross-field rules (each range in order), run after the schema and shown by OpenRPC. */
  readonly rules: readonly CrossFieldRule[];
  /** Positions of SPEC's own shape mapped onto a declared request (declared.ts rpcShape): the
   *  request's rules name fields these positions may not hold, so OpenRPC shows only `rules`. */
  readonly ownShape?: true;
  /** The declared handler; only ever given params checked against `schema`, defaults filled (ArgsOf). */
  run(a: Analytics, args: readonly unknown[]): Promise<unknown>;
}

export function rpcMethod<const P extends readonly Positional[], R extends TSchema>(d: {
  method: string;
  params: P;
  result: R;
  run(a: Analytics, args: ArgsOf<P>): Promise<Static<R>>;
}): RpcMethod {
  return {
    method: d.method,
    params: d.params,
    schema: positionalSchema(d.params),
    result: d.result,
    rules: rangeRules(d.params),
    // Type erasure: the caller (positional-calls.ts) checks the params against this schema and fills the defaults first.
    run: d.run as RpcMethod['run'],
  };
}

/** A range a schema declares (an options object's blockTime, or its filters' blockTime) is in order. */
function rangeRules(params: readonly Positional[]): CrossFieldRule[] {
  return params.flatMap((p) => {
    const props = (p.schema as { properties?: Record<string, { properties?: Record<string, unknown> }> }).properties ?? {};
    return [
      ...(props.blockTime ? [ordered(`${p.name}.blockTime`)] : []),
      ...(props.filters?.properties?.blockTime ? [ordered(`${p.name}.filters.blockTime`)] : []),
    ];
  });
}

// ---- REST: the route's data (api/doors/rest/ builds and mounts the route) ------------------------

/** How a REST route words what a request declaration says (declared.ts): its documents' words,
 *  a field's own name and schema there (`interval` as `granularity`), and which of the checked
 *  request's fields the answer's meta shows. api/doors/rest/ builds the route from these. */
export interface RestWords<S extends TObject = TObject> {
  summary: string;
  description: string;
  /** The answer's schema in the envelope and its words (the declaration's result and summary unless given). */
  result?: TSchema;
  resultWords?: string;
  /** A request field by its REST name and schema, where not derived; a list field so named takes one value (program_id). */
  fields?: Readonly<Record<string, { name: string; schema: TSchema }>>;
  /** Request fields REST does not take (its listing is always newest first). */
  omit?: readonly (keyof S['properties'] & string)[];
  /** The words of a 404, when a null answer is one (the route then answers 404 beyond 400, 401, 403 and 429). */
  notFound?(checked: CheckedRequest<S>): string;
  /** The request fields the meta beside the data shows (`range`: its days and seconds), by REST's meta names. */
  meta?: readonly (keyof S['properties'] & string)[];
  /** The answer is a page (`{data, paginationToken}`): REST's envelope holds its data, `meta.next`
   *  its token, and `meta.total` the count of every match where that is cheap. */
  page?: true;
}

/** An operation's REST route, as data: its path below /api/v1 and, for an operation declared by
 *  its request, REST's words for it. A hand-written route's handler lives in api/doors/rest/. */
export interface RestDoor {
  readonly url: string;
  readonly words?: RestWords;
}

// ---- the operation -----------------------------------------------------------------------

/** The facade's methods: what an operation can name as the preset it runs. */
export type Preset = { [K in keyof Analytics]: Analytics[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof Analytics];

/** The shape of the statement whose estimate prices a call against the request budget: a
 *  question compiled by the question model (stats of a range, a time series, a listing
 *  window), or a fixed read that costs a round trip. */
export type CostKind = 'stats' | 'series' | 'listing' | 'fixed';

/** What a call costs: requests against the plan's rate limit, and the shape of its statement. */
export interface Cost {
  requests: number;
  question: CostKind;
}

export interface Operation {
  /** The catalog's name (SPEC's words, camelCase). */
  readonly name: string;
  /** What it answers, in SPEC's words. */
  readonly summary: string;
  readonly preset: Preset;
  readonly cost: Cost;
  readonly rpc?: RpcMethod;
  readonly rest?: RestDoor;
  /** The GraphQL field that asks the same question (SPEC "Versioning", REST-to-GraphQL mapping). */
  readonly graphql?: { field: string; derived?: true };
  /** Its request, declared once (declared.ts): present when every door is derived from it. */
  readonly request?: RequestDecl;
  /** With `request`: its answer's schema. */
  readonly result?: TSchema;
  /** With `request`: the answer to a request that passed the one check (Analytics.prepare). */
  respond?(a: Analytics, checked: CheckedRequest): Promise<unknown>;
  /** With `request`, where declared: the answer's statements built before any runs (GraphQL's cost guard estimates them). */
  prepared?(a: Analytics, checked: CheckedRequest): Promise<Prepared<unknown>>;
}

/** The head of an operation: its name (the preset's unless given), SPEC's words for it, the
 *  preset it runs, its cost (one request, priced as `question`) and its GraphQL field. */
export const operation = (preset: Preset, question: Cost['question'], summary: string, more: { name?: string; graphql?: string } = {}) => ({
  name: more.name ?? preset,
  summary,
  preset,
  cost: { requests: 1, question },
  ...(more.graphql === undefined ? {} : { graphql: { field: more.graphql } }),
});

// ---- parameter helpers -------------------------------------------------------------------

/** A string enum as `{type: 'string', enum}` (errors read "must be one of …"), typed as its values.
 *  Its title names it: the OpenAPI document states it once under that name (openapi-answers.ts
 *  withNamedEnums), so generated clients make one enum type of that name; no enum goes unnamed. */
export const stringEnum = <const T extends readonly string[]>(values: T, description: string, title: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description, title });

/** An optional property with a default; the type records it, so `filled` can promise the key. */
export const withDefault = <S extends TSchema>(schema: S, value: Static<S>): TOptionalWithFlag<S & { default: Static<S> }, true> =>
  Type.Optional({ ...schema, default: value }, true);

/** Keys of an object schema whose property declares a default. */
type DefaultedKeys<T extends TObject> = { [K in keyof T['properties']]: T['properties'][K] extends { default: unknown } ? K : never }[keyof T['properties']];
/** An options object once its defaults are filled in (`filled`, below): those keys are present. */
export type Filled<T extends TObject> = Static<T> & { [K in DefaultedKeys<T>]-?: Static<T['properties'][K]> };

/**
 * A validated options object (or none) with the schema's defaults filled in at the top
 * level, so every default is stated once, in the schema that documents it.
 */
export function filled<T extends TObject>(schema: T, value: Static<T> | null | undefined): Filled<T> {
  // Every key Filled promises has been set from its declared default.
  return fillDefaults(schema, value) as Filled<T>;
}
