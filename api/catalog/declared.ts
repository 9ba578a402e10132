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
import { rulesDoc, type CheckedRequest, type RequestDecl, type RequestInput } from '../../core/request-check.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { optional, required, restGet, rpcMethod, type Cost, type Operation, type Preset } from './declare.ts';
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
  /** REST's own words for its route, where SPEC documents them apart from the declaration's. */
  restWords?: RestWords<S>;
  /** The answer, from the checked request only (the facade's presets). */
  answer(a: Analytics, checked: CheckedRequest<S>): Promise<Static<R>>;
}

/** How a REST route words what the declaration says: its documents' words, a field's own name
 *  and schema there (`interval` as `granularity`), and the meta beside the data. */
export interface RestWords<S extends TObject> {
  summary: string;
  description: string;
  /** The answer's schema in the envelope and its words (the declaration's result and summary unless given). */
  result?: TSchema;
  resultWords?: string;
  /** A request field by its REST name and schema, where not derived. */
  fields?: Readonly<Record<string, { name: string; schema: TSchema }>>;
  /** The errors the route may answer beyond 400, 401, 403 and 429 (404 with notFound). */
  notFound?(checked: CheckedRequest<S>): string;
  meta?(checked: CheckedRequest<S>, days: DayRange): Record<string, unknown>;
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
export function declared<S extends TObject, R extends TSchema>(d: Declared<S, R>): Operation {
  const run = async (a: Analytics, input: RequestInput, nameOf: (path: string) => string) => {
    const prepared = await a.prepare({ request: d.request, respond: d.answer }, input, nameOf);
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
    ...(d.doors.rpc === undefined ? {} : { rpc: rpcOf(d, d.doors.rpc, run) }),
    ...(d.doors.rest === undefined ? {} : { rest: restOf(d, d.doors.rest, run) }),
    ...(d.doors.graphql === undefined ? {} : { graphql: { field: d.doors.graphql, derived: true } }),
    ...(d.doors.graphqlPeer === undefined ? {} : { graphql: { field: d.doors.graphqlPeer } }),
  };
}

type Run = (a: Analytics, input: RequestInput, nameOf: (path: string) => string) => Promise<{ checked: CheckedRequest; data: unknown }>;

function rpcOf<S extends TObject, R extends TSchema>(d: Declared<S, R>, method: string, run: Run) {
  const props = Object.fromEntries(Object.entries(d.request.schema.properties).map(([k, s]) => [rpcName(k), s]));
  const Options = options(props, d.request.schema.description ?? `${method} options`);
  const mandatory = (d.request.schema.required ?? []).length > 0;
  const position = (mandatory ? required : optional)('options', Options, d.rpcWords ?? `Options object: ${Object.keys(props).join(', ')}`);
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

function restOf<S extends TObject, R extends TSchema>(d: Declared<S, R>, url: string, run: Run) {
  const fields = d.request.schema.properties;
  const w = d.restWords;
  const required = new Set(d.request.schema.required ?? []);
  const scalar = (name: string, s: TSchema) => (required.has(name) ? s : Type.Optional(s));
  const own = (k: string, s: TSchema) => w?.fields?.[k] ?? { name: restName(k), schema: s };
  const day = (s: TSchema) => (required.has('range') ? s : Type.Optional(s));
  // A field the URL names (`:signature`) is a path parameter; the others are the query's.
  const inPath = (k: string) => url.includes(`:${own(k, fields[k]!).name}`);
  const pathFields = scalarFields(d.request.schema).filter(([k]) => inPath(k));
  const querystring = Type.Object({
    ...('protocol' in fields || 'protocols' in fields ? { protocol_name: scalar('protocol', query.protocol_name) } : {}),
    ...('range' in fields ? { date_from: day(query.date_from), date_to: day(query.date_to) } : {}),
    ...Object.fromEntries(
      scalarFields(d.request.schema)
        .filter(([k]) => !inPath(k))
        .map(([k, s]) => {
          const f = own(k, s);
          return [f.name, scalar(k, f.schema)];
        }),
    ),
  });
  const params = pathFields.length === 0 ? {} : { params: Type.Object(Object.fromEntries(pathFields.map(([k, s]) => [own(k, s).name, own(k, s).schema]))) };
  const queried = Object.keys(querystring.properties).length === 0 ? {} : { querystring };
  // The rules as REST names their fields: the range's days first, in order, then the declaration's.
  const rules = [...('range' in fields ? [DAYS_IN_ORDER] : []), ...d.request.rules.map((r) => ({ ...r, doc: restDoc(r.doc, (k) => own(k, fields[k]!).name) }))];
  // The schema is built from the declaration, so its static type is too wide for the handler's; the route validates and serialises by it all the same.
  const schema: FastifySchema = {
    summary: w?.summary ?? d.summary,
    ...(w === undefined ? {} : { description: w.description }),
    ...params,
    ...queried,
    ...rulesDoc(rules),
    response: {
      200: envelope(w?.result ?? d.result, w?.resultWords ?? d.summary),
      ...(w?.notFound ? errors(400, 401, 403, 404, 429) : errors(400, 401, 403, 429)),
    },
  };
  return restGet({
    url,
    schema,
    async run(a, req) {
      const q = { ...(req.query as Record<string, string | undefined>), ...(req.params as Record<string, string | undefined>) };
      const values: Record<string, unknown> = Object.fromEntries(scalarFields(d.request.schema).map(([k, s]) => [k, q[own(k, s).name]]));
      if ('protocol' in fields) values.protocol = q.protocol_name;
      if ('protocols' in fields && q.protocol_name !== undefined) values.protocols = [q.protocol_name];
      const days = 'range' in fields ? { from: q.date_from, to: q.date_to, names: REST_DAYS } : undefined;
      const { checked, data } = await run(a, { values, ...(days ? { days } : {}) }, (path) => own(path, fields[path]!).name);
      if (data === null && w?.notFound) throw notFound(w.notFound(checked as CheckedRequest<S>));
      const meta = w?.meta?.(checked as CheckedRequest<S>, { dateFrom: q.date_from, dateTo: q.date_to, range: checked.range }) ?? {};
      return ok(data, { count: Array.isArray(data) ? data.length : 1, ...meta });
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
