// REST's route of an operation declared by its request (api/catalog/declared.ts): the
// request's scalar fields in snake_case as the query (a field the URL names, `:signature`, as
// a path parameter), `protocol(s)` as protocol_name, `range` as date_from/date_to; the
// declaration's rules renamed to those names; the answer in the success envelope with the
// meta the declaration asks for. The route only maps its query onto the request's names:
// the facade's one entry (Analytics.prepare) runs the one check.
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { notFound } from '../../core/errors.ts';
import { rulesDoc, type CheckedRequest, type CrossFieldRule, type RequestDecl } from '../../core/request-check.ts';
import type { Operation, RestWords } from '../catalog/declare.ts';
import { RPC_NAMES, scalarFields } from '../catalog/declared.ts';
import { query } from '../catalog/params.ts';
import { rangeMeta } from './rest-params.ts';
import { restGet, type RestRoute } from './rest-route.ts';
import { DAYS_IN_ORDER, envelope, errors, ok } from './rest-schemas.ts';

const REST_DAYS = { from: 'date_from', to: 'date_to' };

/** REST's name of a request field: snake_case, and protocol_name for one protocol or a list of one. */
export const restName = (field: string): string =>
  field === 'protocol' || field === 'protocols' ? 'protocol_name' : field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** REST's meta name of a request field the answer's meta shows (`range` shows its days and seconds). */
const META_NAMES: Readonly<Record<string, string>> = { protocol: 'protocolName', protocols: 'protocolName', interval: 'granularity' };

/** An operation declared by its request, with a REST door: the route built from the request and REST's words. */
type DeclaredRest = Operation & { request: RequestDecl<TObject>; rest: { url: string; words?: RestWords } };

export const isDeclaredRest = (op: Operation): op is DeclaredRest => op.request !== undefined && op.respond !== undefined && op.rest !== undefined;

export function declaredRoute(op: DeclaredRest): RestRoute {
  const { url, words: w } = op.rest;
  const fields = op.request.schema.properties;
  const required = new Set(op.request.schema.required ?? []);
  const own = (k: string, s: TSchema) => w?.fields?.[k] ?? { name: restName(k), schema: s };
  // A field the URL names (`:signature`) is a path parameter; the others are the query's.
  const inPath = (k: string) => url.includes(`:${own(k, fields[k]!).name}`);
  const scalars = scalarFields(op.request.schema);
  // The rules as REST names their fields: the range's days first, in order, then the declaration's.
  const rules = [
    ...('range' in fields ? [DAYS_IN_ORDER] : []),
    ...op.request.rules.map((r) => ({ ...r, doc: restDoc(r.doc, (k) => own(k, fields[k]!).name) })),
  ];
  return restGet({
    url,
    schema: routeSchema(
      op,
      scalars.filter(([k]) => inPath(k)),
      scalars.filter(([k]) => !inPath(k)),
      own,
      rules,
      required,
    ),
    async run(a, req) {
      const q = { ...(req.query as Record<string, string | undefined>), ...(req.params as Record<string, string | undefined>) };
      const values: Record<string, unknown> = Object.fromEntries(scalars.map(([k, s]) => [k, q[own(k, s).name]]));
      if ('protocol' in fields) values.protocol = q.protocol_name;
      if ('protocols' in fields && q.protocol_name !== undefined) values.protocols = [q.protocol_name];
      const days = 'range' in fields ? { from: q.date_from, to: q.date_to, names: REST_DAYS } : undefined;
      const nameOf = (path: string) => own(path, fields[path]!).name;
      const prepared = await a.prepare({ request: op.request, respond: op.respond! }, { values, ...(days ? { days } : {}) }, nameOf);
      const data = await prepared.answer();
      const checked: CheckedRequest = prepared.checked;
      if (data === null && w?.notFound) throw notFound(w.notFound(checked));
      return ok(data, { count: Array.isArray(data) ? data.length : 1, ...metaOf(w, checked, q) });
    },
  });
}

type Named = (k: string, s: TSchema) => { name: string; schema: TSchema };

/** The route's schema, built from the declaration (so its static type is too wide for the handler's; the route validates and serialises by it all the same). */
function routeSchema(
  op: DeclaredRest,
  pathFields: [string, TSchema][],
  queryFields: [string, TSchema][],
  own: Named,
  rules: readonly CrossFieldRule[],
  required: ReadonlySet<string>,
): FastifySchema {
  const w = op.rest.words;
  const fields = op.request.schema.properties;
  const optionalUnless = (name: string, s: TSchema) => (required.has(name) ? s : Type.Optional(s));
  const querystring = Type.Object({
    ...('protocol' in fields || 'protocols' in fields ? { protocol_name: optionalUnless('protocol', query.protocol_name) } : {}),
    ...('range' in fields ? { date_from: optionalUnless('range', query.date_from), date_to: optionalUnless('range', query.date_to) } : {}),
    ...Object.fromEntries(
      queryFields.map(([k, s]) => {
        const f = own(k, s);
        return [f.name, optionalUnless(k, f.schema)];
      }),
    ),
  });
  const params = pathFields.length === 0 ? {} : { params: Type.Object(Object.fromEntries(pathFields.map(([k, s]) => [own(k, s).name, own(k, s).schema]))) };
  const queried = Object.keys(querystring.properties).length === 0 ? {} : { querystring };
  return {
    summary: w?.summary ?? op.summary,
    ...(w === undefined ? {} : { description: w.description }),
    ...params,
    ...queried,
    ...rulesDoc(rules),
    response: {
      200: envelope(w?.result ?? op.result!, w?.resultWords ?? op.summary),
      ...(w?.notFound ? errors(400, 401, 403, 404, 429) : errors(400, 401, 403, 429)),
    },
  };
}

/** The meta beside the data: the request fields the declaration's words name, by REST's meta names. */
function metaOf(w: RestWords | undefined, checked: CheckedRequest, q: Record<string, string | undefined>): Record<string, unknown> {
  const shown = w?.meta ?? [];
  return Object.fromEntries(
    shown.flatMap((k) =>
      k === 'range'
        ? Object.entries(rangeMeta({ dateFrom: q.date_from, dateTo: q.date_to, range: checked.range }))
        : [[META_NAMES[k] ?? k, (checked as Record<string, unknown>)[k] ?? null]],
    ),
  );
}

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
