// An operation declared by its request alone (core/request-check.ts `request`: one TypeBox
// schema with door-neutral names, its protocol scope, its cross-field rules). Its doors are
// derived: the JSON-RPC method (one options object: the request's fields, `protocol` as
// protocolName and `range` as blockTime, or SPEC's own positions mapped onto the request:
// `rpcShape`; MCP's tool follows from it), the REST route (built by api/doors/rest/declared-routes.ts
// from the request and REST's words, `restWords`) and the GraphQL field
// (api/doors/graphql/declared-fields.ts). Each door only maps its wire shape onto the request's
// names; the facade runs the one check (Analytics.check), and the operation answers from the
// checked request (a preset, or Analytics.prepare's one entry of prepared answers).
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { CheckedRequest, RequestDecl, RequestInput } from '../../core/request-check.ts';
import type { Analytics, Prepared } from '../analytics/analytics.ts';
import { optional, required, rpcMethod, type Cost, type Operation, type Positional, type Preset, type RestWords } from './declare.ts';
import { options } from './params.ts';

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
  restWords?: RestWords<S>;
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

/** JSON-RPC's name of a request field (the others keep theirs). */
export const RPC_NAMES: Readonly<Record<string, string>> = { protocol: 'protocolName', range: 'blockTime' };
const rpcName = (field: string): string => RPC_NAMES[field] ?? field;

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
    const checked = await a.check(request as RequestDecl<S>, input, nameOf);
    return { checked, data: await d.answer(a, checked) };
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
    // REST's route is built from the request and these words by api/doors/rest/ (declared-routes.ts).
    ...(d.doors.rest === undefined ? {} : { rest: { url: d.doors.rest, ...(d.restWords === undefined ? {} : { words: d.restWords as RestWords }) } }),
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
