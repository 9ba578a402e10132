// An operation declared by its request alone (core/request-check.ts `request`: one TypeBox
// schema with door-neutral names, its protocol scope, its cross-field rules). Its doors are
// derived: the JSON-RPC method (one options object: the request's fields, `protocol` as
// protocolName and `range` as blockTime; MCP's tool follows from it), the REST route (the
// scalar fields in snake_case, `protocol(s)` as protocol_name, `range` as date_from/date_to)
// and the GraphQL field (api/graphql/declared-fields.ts). Each door only maps its wire
// shape onto the request's names; the facade's one entry (Analytics.prepare) runs the one
// check, and the operation answers from the checked request.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { notFound } from '../../core/errors.ts';
import { rulesDoc, type CheckedRequest, type RequestDecl, type RequestInput, type ScopeKind } from '../../core/request-check.ts';
import type { Analytics, Prepared } from '../analytics/analytics.ts';
import { optional, required, restGet, rpcMethod, type Cost, type Operation, type Positional, type Preset } from './declare.ts';
import { DAYS_IN_ORDER, envelope, errors, ok } from './rest-schemas.ts';
import type { DayRange } from './rest-params.ts';
import { options, query } from './params.ts';

/** The doors an operation is offered on, by their names there. */
export interface DeclaredDoors {
  /** The JSON-RPC method (and so the MCP tool). */
  rpc?: string;
  /** The REST path below /api/v1. */
  rest?: string;
  /** The GraphQL Query field, derived from the request. */
  graphql?: string;
  /** The GraphQL field of the SDL's own that asks the same question (SPEC "Versioning"), when none is derived. */
  graphqlPeer?: string;
}

export interface Declared<S extends TObject, R extends TSchema> {
  name: string;
  summary: string;
  /** The facade's preset it answers with, and its cost; `prepare` and one fixed-cost request unless given. */
  preset?: Preset;
  cost?: Cost;
  request: RequestDecl<S>;
  result: R;
  doors: DeclaredDoors;
  /** The JSON-RPC options position's words; "Options object: " and its fields unless given. */
  rpcWords?: string;
  /** The one field JSON-RPC takes as a position of its own (getTransaction's signature), worded by rpcWords. */
  rpcPositional?: string;
  /** JSON-RPC's own positions, where SPEC gives a shape the derivation does not (a listing's nested filters). */
  rpcShape?: RpcShape;
  /** REST's own words for its route, where SPEC documents them apart from the declaration's. */
  restWords?: RestWords<S, R>;
  /** The answer, from the checked request only (the facade's presets); `prepared`'s, run, unless given. */
  answer?(a: Analytics, checked: CheckedRequest<S>): Promise<Static<R>>;
  /** The answer as statements built before any runs, for a door that costs them first (GraphQL's guard). */
  prepared?(a: Analytics, checked: CheckedRequest<S>): Promise<Prepared<Static<R>>>;
}

/** A JSON-RPC method's positions as SPEC gives them, mapped onto the request's names: validated as
 *  declared (positional-calls.ts), then `values` hands the one check the request, whose paths
 *  `nameOf` words back in the method's terms. */
export interface RpcShape {
  params: readonly Positional[];
  values(args: readonly unknown[]): Record<string, unknown>;
  nameOf(path: string): string;
}

/** How a REST route words what the declaration says: its documents' words, a field's own name
 *  and schema there (`interval` as `granularity`), and the meta beside the data. */
export interface RestWords<S extends TObject, R extends TSchema = TSchema> {
  summary: string;
  description: string;
  /** The answer's schema in the envelope and its words (the declaration's result and summary unless given). */
  result?: TSchema;
  resultWords?: string;
  /** A request field by its REST name and schema, where not derived; a list field so named takes one value (program_id). */
  fields?: Readonly<Record<string, { name: string; schema: TSchema }>>;
  /** Request fields REST does not take (its listing is always newest first). */
  omit?: readonly string[];
  /** How REST's protocol_name is resolved, where SPEC words it apart (a listing's: an unknown one matches nothing). */
  scope?: ScopeKind;
  /** The errors the route may answer beyond 400, 401, 403 and 429 (404 with notFound). */
  notFound?(checked: CheckedRequest<S>): string;
  /** The envelope's data, where not the answer itself. */
  data?(answer: Static<R>): unknown;
  meta?(checked: CheckedRequest<S>, days: DayRange, answer: Static<R>, a: Analytics): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** JSON-RPC's name of a request field (the others keep theirs). */
const RPC_NAMES: Readonly<Record<string, string>> = { protocol: 'protocolName', range: 'blockTime' };
const rpcName = (field: string): string => RPC_NAMES[field] ?? field;
/** REST's name of a request field: snake_case, and protocol_name for one protocol or a list of one. */
export const restName = (field: string): string =>
  field === 'protocol' || field === 'protocols' ? 'protocol_name' : field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Scalar request fields (what a query string or a GraphQL argument carries as such). */
export const scalarFields = (schema: TObject): [string, TSchema][] =>
  Object.entries(schema.properties).filter(
    ([k, s]) => k !== 'protocol' && k !== 'protocols' && k !== 'range' && ['string', 'integer', 'number', 'boolean'].includes(String(s.type)),
  );

/** An operation of the catalog, every door derived from its one request declaration. */
export function declared<S extends TObject, R extends TSchema>(decl: Declared<S, R>): Operation {
  const prepared = decl.prepared;
  const answer = decl.answer ?? (async (a: Analytics, c: CheckedRequest<S>) => (await prepared!(a, c)).answer());
  const d = { ...decl, answer };
  const run = async (a: Analytics, input: RequestInput, nameOf: (path: string) => string, request: RequestDecl = d.request) => {
    // The declaration's types hold for a request its own schema checked (a door may only narrow its protocol scope).
    const prepared = await a.prepare({ request: request as RequestDecl<S>, respond: d.answer }, input, nameOf);
    return { checked: prepared.checked, data: await prepared.answer() };
  };
  return {
    name: d.name,
    summary: d.summary,
    preset: d.preset ?? 'prepare',
    cost: d.cost ?? { requests: 1, question: 'fixed' },
    request: d.request,
    result: d.result,
    // The declaration's types hold for a request its own schema checked.
    respond: (a, checked) => d.answer(a, checked as CheckedRequest<S>),
    ...(prepared === undefined ? {} : { prepared: (a: Analytics, checked: CheckedRequest) => prepared(a, checked as CheckedRequest<S>) }),
    ...(d.doors.rpc === undefined ? {} : { rpc: rpcOf(d, d.doors.rpc, run) }),
    ...(d.doors.rest === undefined ? {} : { rest: restOf(d, d.doors.rest, run) }),
    ...(d.doors.graphql === undefined ? {} : { graphql: { field: d.doors.graphql, derived: true } }),
    ...(d.doors.graphqlPeer === undefined ? {} : { graphql: { field: d.doors.graphqlPeer } }),
  };
}

type Run = (a: Analytics, input: RequestInput, nameOf: (path: string) => string, request?: RequestDecl) => Promise<{ checked: CheckedRequest; data: unknown }>;

function rpcOf<S extends TObject, R extends TSchema>(d: Declared<S, R>, method: string, run: Run) {
  const props = Object.fromEntries(Object.entries(d.request.schema.properties).map(([k, s]) => [rpcName(k), s]));
  const Options = options(props, d.request.schema.description ?? `${method} options`);
  const mandatory = (d.request.schema.required ?? []).length > 0;
  const position = (mandatory ? required : optional)('options', Options, d.rpcWords ?? `Options object: ${Object.keys(props).join(', ')}`);
  const shape = d.rpcShape;
  if (shape !== undefined) {
    const m = rpcMethod({
      method,
      params: shape.params,
      result: d.result,
      run: (a, args) => run(a, { values: shape.values(args) }, shape.nameOf).then((r) => r.data as Static<R>),
    });
    return { ...m, ownShape: true as const };
  }
  const alone = d.rpcPositional;
  if (alone !== undefined) {
    return rpcMethod({
      method,
      params: [required(alone, d.request.schema.properties[alone]!, d.rpcWords ?? alone)],
      result: d.result,
      run: (a, [v]) => run(a, { values: { [alone]: v } }, (path) => path).then((r) => r.data as Static<R>),
    });
  }
  return rpcMethod({
    method,
    // A request of no fields is a method of no params (getProtocols).
    params: Object.keys(props).length === 0 ? [] : [position],
    result: d.result,
    run: (a, [o]) => {
      const given = (o ?? {}) as Record<string, unknown>;
      const values = Object.fromEntries(Object.keys(d.request.schema.properties).map((k) => [k, given[rpcName(k)]]));
      return run(a, { values }, (path) => `options.${path.split('.').map(rpcName).join('.')}`).then((r) => r.data as Static<R>);
    },
  });
}

/** A REST request field: its name and schema in the query (or the path), and whether REST
 *  gives one value of what the request holds as a list (protocol_name, program_id). */
interface RestField {
  key: string;
  name: string;
  schema: TSchema;
  single: boolean;
}

/** The fields of a declared request as REST takes them, in the request's order: `protocol(s)`
 *  as protocol_name, `range` as date_from and date_to, the scalars and the renamed lists. */
function restFields<S extends TObject, R extends TSchema>(d: Declared<S, R>): RestField[] {
  const w = d.restWords;
  const required = new Set(d.request.schema.required ?? []);
  const optional = (k: string, s: TSchema) => (required.has(k) ? s : Type.Optional(s));
  const scalars = new Set(scalarFields(d.request.schema).map(([k]) => k));
  return Object.entries(d.request.schema.properties).flatMap(([k, s]): RestField[] => {
    if (w?.omit?.includes(k)) return [];
    const own = w?.fields?.[k];
    if (k === 'protocol' || k === 'protocols') {
      return [{ key: k, name: 'protocol_name', schema: optional(k, own?.schema ?? query.protocol_name), single: k === 'protocols' }];
    }
    if (k === 'range') {
      return [
        { key: 'range.gte', name: 'date_from', schema: optional(k, query.date_from), single: false },
        { key: 'range.lte', name: 'date_to', schema: optional(k, query.date_to), single: false },
      ];
    }
    if (own !== undefined) return [{ key: k, name: own.name, schema: optional(k, own.schema), single: !scalars.has(k) }];
    return scalars.has(k) ? [{ key: k, name: restName(k), schema: optional(k, s), single: false }] : [];
  });
}

function restOf<S extends TObject, R extends TSchema>(d: Declared<S, R>, url: string, run: Run) {
  const w = d.restWords;
  const all = restFields(d);
  // A field the URL names (`:signature`) is a path parameter; the others are the query's.
  const pathFields = all.filter((f) => url.includes(`:${f.name}`));
  const queryFields = all.filter((f) => !pathFields.includes(f));
  const object = (fs: RestField[]) => Type.Object(Object.fromEntries(fs.map((f) => [f.name, f.schema])));
  const nameOf = (k: string): string => all.find((f) => f.key === k)?.name ?? k;
  // The rules as REST names their fields: the range's days first, in order, then the declaration's.
  const rules = [...('range' in d.request.schema.properties ? [DAYS_IN_ORDER] : []), ...d.request.rules.map((r) => ({ ...r, doc: restDoc(r.doc, nameOf) }))];
  // The schema is built from the declaration, so its static type is too wide for the handler's; the route validates and serialises by it all the same.
  const schema: FastifySchema = {
    summary: w?.summary ?? d.summary,
    ...(w === undefined ? {} : { description: w.description }),
    ...(pathFields.length === 0 ? {} : { params: object(pathFields) }),
    ...(queryFields.length === 0 ? {} : { querystring: object(queryFields) }),
    ...rulesDoc(rules),
    response: {
      200: envelope(w?.result ?? d.result, w?.resultWords ?? d.summary),
      // 400 when there is anything to refuse (a query or a path parameter), 404 with notFound.
      ...(all.length > 0 ? errors(400) : {}),
      ...errors(401, 403),
      ...(w?.notFound ? errors(404) : {}),
      ...errors(429),
    },
  };
  // REST may resolve its protocol_name apart (a listing's narrows); the rest of the request is the declaration's.
  const request = w?.scope === undefined ? d.request : { ...d.request, scope: w.scope };
  return restGet({
    url,
    schema,
    async run(a, req) {
      const q = { ...(req.query as Record<string, string | undefined>), ...(req.params as Record<string, string | undefined>) };
      const values: Record<string, unknown> = {};
      for (const f of all) if (!f.key.startsWith('range.') && q[f.name] !== undefined) values[f.key] = f.single ? [q[f.name]] : q[f.name];
      const days = 'range' in d.request.schema.properties ? { from: q.date_from, to: q.date_to, names: REST_DAYS } : undefined;
      const { checked, data } = await run(a, { values, ...(days ? { days } : {}) }, nameOf, request);
      const c = checked as CheckedRequest<S>;
      if (data === null && w?.notFound) throw notFound(w.notFound(c));
      const shown = w?.data ? w.data(data as Static<R>) : data;
      const meta = (await w?.meta?.(c, { dateFrom: q.date_from, dateTo: q.date_to, range: checked.range }, data as Static<R>, a)) ?? {};
      return ok(shown, { count: Array.isArray(shown) ? shown.length : 1, ...meta });
    },
  });
}

const REST_DAYS = { from: 'date_from', to: 'date_to' };
/** A rule's document with the request's names as REST gives them (`range.gte` is date_from). */
function restDoc(doc: Readonly<Record<string, unknown>>, nameOf: (field: string) => string): Record<string, unknown> {
  const rename = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    if (v === 'range.gte') return 'date_from';
    if (v === 'range.lte') return 'date_to';
    return v in RPC_NAMES || v.includes('.') ? v : nameOf(v);
  };
  const per = doc.perDay as Record<string, unknown> | undefined;
  return {
    ...doc,
    ...(Array.isArray(doc.params) ? { params: doc.params.map(rename) } : {}),
    ...(per === undefined ? {} : { perDay: { ...per, param: rename(per.param) } }),
  };
}
