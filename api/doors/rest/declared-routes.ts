// REST's route of an operation declared by its request (api/catalog/declared.ts): the
// request's scalar fields in snake_case as the query (a field the URL names, `:signature`, as
// a path parameter), `protocol(s)` as protocol_name, `range` as date_from/date_to; the
// declaration's rules renamed to those names; the answer in the success envelope with the
// meta the declaration asks for. The route only maps its query onto the request's names:
// the facade's one entry (Analytics.prepare) runs the one check.
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { notFound } from '../../../core/errors.ts';
import type { CheckedRequest, RequestDecl } from '../../../core/request-check.ts';
import { rulesDoc, type CrossFieldRule } from '../../../core/request-rules.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import type { Operation, RestWords } from '../../catalog/declare.ts';
import { RPC_NAMES, scalarFields } from '../../catalog/declared.ts';
import { query } from '../../catalog/params.ts';
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
function restFields(op: DeclaredRest): RestField[] {
  const w = op.rest.words;
  const required = new Set(op.request.schema.required ?? []);
  const optional = (k: string, s: TSchema) => (required.has(k) ? s : Type.Optional(s));
  const scalars = new Set(scalarFields(op.request.schema).map(([k]) => k));
  return Object.entries(op.request.schema.properties).flatMap(([k, s]): RestField[] => {
    if ((w?.omit as readonly string[] | undefined)?.includes(k)) return [];
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

export function declaredRoute(op: DeclaredRest): RestRoute {
  const { url, words: w } = op.rest;
  const all = restFields(op);
  const nameOf = (k: string): string => all.find((f) => f.key === k)?.name ?? k;
  // The rules as REST names their fields: the range's days first, in order, then the declaration's.
  const rules = [...('range' in op.request.schema.properties ? [DAYS_IN_ORDER] : []), ...op.request.rules.map((r) => ({ ...r, doc: restDoc(r.doc, nameOf) }))];
  return restGet({
    url,
    schema: routeSchema(op, all, rules),
    async run(a, req) {
      const q = { ...(req.query as Record<string, string | undefined>), ...(req.params as Record<string, string | undefined>) };
      const values: Record<string, unknown> = {};
      for (const f of all) if (!f.key.startsWith('range.') && q[f.name] !== undefined) values[f.key] = f.single ? [q[f.name]] : q[f.name];
      const days = 'range' in op.request.schema.properties ? { from: q.date_from, to: q.date_to, names: REST_DAYS } : undefined;
      const checked: CheckedRequest = await a.check(op.request, { values, ...(days ? { days } : {}) }, nameOf);
      const data = await op.respond!(a, checked);
      if (data === null && w?.notFound) throw notFound(w.notFound(checked));
      const shown = w?.page ? (data as Page).data : data;
      const meta = { ...metaOf(w, checked, q), ...(w?.page ? await pageMeta(a, checked, data as Page) : {}) };
      return ok(shown, { count: Array.isArray(shown) ? shown.length : 1, ...meta });
    },
  });
}

/** The route's schema, built from the declaration (so its static type is too wide for the handler's; the route validates and serialises by it all the same). */
function routeSchema(op: DeclaredRest, all: readonly RestField[], rules: readonly CrossFieldRule[]): FastifySchema {
  const w = op.rest.words;
  // A field the URL names (`:signature`) is a path parameter; the others are the query's.
  const pathFields = all.filter((f) => op.rest.url.includes(`:${f.name}`));
  const queryFields = all.filter((f) => !pathFields.includes(f));
  const object = (fs: readonly RestField[]) => Type.Object(Object.fromEntries(fs.map((f) => [f.name, f.schema])));
  return {
    summary: w?.summary ?? op.summary,
    ...(w === undefined ? {} : { description: w.description }),
    ...(pathFields.length === 0 ? {} : { params: object(pathFields) }),
    ...(queryFields.length === 0 ? {} : { querystring: object(queryFields) }),
    ...rulesDoc(rules),
    response: {
      200: envelope(w?.result ?? op.result!, w?.resultWords ?? op.summary),
      // 400 when there is anything to refuse (a query or a path parameter), 404 with notFound.
      ...(all.length > 0 ? errors(400) : {}),
      ...errors(401, 403),
      ...(w?.notFound ? errors(404) : {}),
      ...errors(429),
    },
  };
}

/** A listing's answer: a page of records and the token of the next. */
interface Page {
  data: unknown[];
  paginationToken: string | null;
}

/** A page's meta: the next page's cursor, and every match's count where that is cheap (the hourly
 *  view plus ragged edges), which it is unless a filter the view lacks is set. */
async function pageMeta(a: Analytics, c: CheckedRequest, p: Page): Promise<Record<string, unknown>> {
  const f = c as CheckedRequest & { programIds?: unknown; signatures?: unknown };
  const cheap = f.programIds === undefined && f.signatures === undefined;
  return { next: p.paginationToken, ...(cheap ? { total: await a.transactionCount(c.protocolsAsked, c.range) } : {}) };
}

/** The meta beside the data: the request fields the declaration's words name, by REST's meta
 *  names (a list of protocols as the one REST takes, as asked). */
function metaOf(w: RestWords | undefined, checked: CheckedRequest, q: Record<string, string | undefined>): Record<string, unknown> {
  const shown = (w?.meta ?? []) as readonly string[];
  const c = checked as Record<string, unknown>;
  return Object.fromEntries(
    shown.flatMap((k) => {
      if (k === 'range') return Object.entries(rangeMeta({ dateFrom: q.date_from, dateTo: q.date_to, range: checked.range }));
      if (k === 'protocols') return [['protocolName', checked.protocolsAsked?.[0] ?? null]];
      return [[META_NAMES[k] ?? k, c[k] ?? null]];
    }),
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
