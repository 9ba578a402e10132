// What the OpenAPI document adds to the route schemas: the answers every operation can get
// whatever its route (a URI over the limit, throttling, a malformed request, access
// control), the rate-limit headers every answer carries, 405 with Allow for a method a path
// does not answer, and protocol names as the registry's list. Route schemas state what is
// particular to a route; this states the HTTP layer's part once (docs/rest-and-sql.md,
// "Statuses").
import { HTTP_MAX_PATH_PARAM_CHARS, HTTP_MAX_URI_BYTES } from '../../../core/limits/http.ts';
import { PLANS } from '../../../core/plans.ts';
import { ACTIVE_PROTOCOL_COMMENT, CalendarDay, CHECKED_DAY_COMMENT, INT64 } from '../../../core/vocabulary/primitives.ts';

type Json = Record<string, unknown>;
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };

/** SPEC "Limits": on every answer. */
const RATE_LIMIT_HEADERS: Json = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed per minute for the plan (or for requests without a valid key, per address)',
    schema: { type: 'integer', format: INT64 },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', format: INT64, minimum: 0 } },
  'X-RateLimit-Reset': { description: 'When the window resets (ISO 8601)', schema: { type: 'string', format: 'date-time' } },
  'X-RateLimit-Plan': {
    description: 'free, x402 or enterprise (requests without a valid key count as free, per address)',
    schema: { type: 'string', enum: [...PLANS], title: 'Plan' },
  },
};
const RETRY_AFTER = { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', format: INT64, minimum: 1 } };

/** Answers any operation can get, whatever its route. */
const COMMON: Record<number, string> = {
  400: 'Malformed request (a path that is not valid percent-encoding, an HTTP/1.1 request without Host) or an invalid parameter: the message names it',
  414: `The URI is longer than ${HTTP_MAX_URI_BYTES} bytes, or a path parameter longer than ${HTTP_MAX_PATH_PARAM_CHARS} characters (its maxLength)`,
  415: 'A request sent with a Content-Encoding other than identity: bodies are accepted uncoded only (Accept-Encoding: identity)',
  417: 'An Expect header other than 100-continue',
  429: 'Rate limit exceeded (per API key and plan; requests without a valid key per client address): wait Retry-After seconds',
  500: 'Internal error (its cause is logged, never shown)',
  503: 'The service is starting, stopping or cannot reach its store: retry later',
};
const SECURED: Record<number, string> = {
  401: 'API key missing: send x-api-key (or the api-key query parameter)',
  403: 'API key invalid, inactive or revoked',
};
const WITH_BODY: Record<number, string> = {
  408: 'The request was not received in full in time',
  413: 'Request body larger than the limit of this endpoint',
  415: 'Body is not application/json, or sent with a Content-Encoding other than identity',
};

const errorAnswer = (description: string): Json => ({ description, content: ERROR_CONTENT });

/** The document with the common answers and headers added to every operation (an answer a
 *  route declares itself keeps its own words). */
export function withCommonAnswers<D extends object>(document: D): D {
  const doc = document as Json;
  const components = (doc.components ?? {}) as Json;
  components.responses = {
    ...(components.responses as Json | undefined),
    MethodNotAllowed: {
      description: 'The path exists but does not answer this method (e.g. PUT, TRACE or QUERY on a GET route); Allow lists the methods it answers',
      headers: { Allow: { description: 'The methods this path answers, e.g. "GET, HEAD"', required: true, schema: { type: 'string' } }, ...RATE_LIMIT_HEADERS },
      content: ERROR_CONTENT,
    },
  };
  doc.components = components;
  const globalSecurity = doc.security as unknown[] | undefined;
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      if (typeof op !== 'object' || op === null || typeof op.responses !== 'object') continue;
      const secured = ((op.security as unknown[] | undefined) ?? globalSecurity ?? []).length > 0;
      const extra = { ...COMMON, ...(secured ? SECURED : {}), ...(op.requestBody === undefined ? {} : WITH_BODY) };
      const responses = op.responses as Record<string, Json>;
      for (const [status, description] of Object.entries(extra)) responses[status] ??= errorAnswer(description);
      for (const [status, answer] of Object.entries(responses)) {
        answer.headers = { ...RATE_LIMIT_HEADERS, ...(answer.headers as Json | undefined), ...(status === '429' ? { 'Retry-After': RETRY_AFTER } : {}) };
      }
    }
  }
  return document;
}

/**
 * The document with every day parameter of a query (date_from, date_to: CheckedDay, which the
 * one check converts and words) stating CalendarDay's rule (`format: date` and its pattern, what
 * the check accepts), and declared `style: form, explode: false`. For one value OpenAPI writes both the same (`?date_from=2025-01-31`),
 * but a generator may not: openapi-generator's typescript-fetch client sends an exploded date as
 * Date.toISOString() (`2025-01-31T00:00:00.000Z`, which the server refuses with 400) and an
 * unexploded one as the day (test/openapi-ts-client.test.ts). In place, like withCommonAnswers.
 */
export function withDayParameters<D extends object>(document: D): D {
  for (const item of Object.values(((document as Json).paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      const parameters = (typeof op === 'object' && op !== null ? op.parameters : undefined) as Json[] | undefined;
      for (const p of parameters ?? []) {
        const schema = p.schema as Json | undefined;
        if (p.in !== 'query' || schema?.$comment !== CHECKED_DAY_COMMENT) continue;
        // The marker has done its work; OpenAPI 3.0 has no $comment.
        delete schema.$comment;
        Object.assign(schema, { format: CalendarDay.format, pattern: CalendarDay.pattern });
        Object.assign(p, { style: 'form', explode: false });
      }
    }
  }
  return document;
}

/**
 * The document with every protocol name the server checks against the registry (the
 * ActiveProtocolName primitive, marked by its $comment) stated as the registry's active
 * names: exactly the values the server accepts. A listing's protocol filter keeps the
 * pattern (an unknown name there matches nothing). A copy; the cached document is left as it is.
 */
export function withProtocolNames(doc: Json, names: readonly string[]): Json {
  if (names.length === 0) return doc;
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value !== 'object' || value === null) return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = visit(v);
    if (out.$comment === ACTIVE_PROTOCOL_COMMENT) {
      // The marker has done its work; OpenAPI 3.0 has no $comment.
      delete out.$comment;
      delete out.pattern;
      out.enum = [...names];
      out.title = 'ProtocolName'; // one enum class in generated clients
    }
    return out;
  };
  return visit(doc) as Json;
}

/** A Go-style constant name of an enum value ("protocol_name" -> PROTOCOL_NAME; "SqlExport" -> SQL_EXPORT). */
const constantName = (v: unknown): string =>
  String(v)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/**
 * Names for the values of the named enums that share a value name with another one (ExportColumn's
 * and StratumColumn's protocol_name, SamplingStrategy's and SqlSamplingStrategy's RANDOM): such an
 * enum's values are named after it (`x-enum-varnames`: STRATUM_COLUMN_PROTOCOL_NAME), since a
 * generator that puts every enum's constants in one namespace (openapi-generator's Go client by
 * default) would declare the same name twice. Enums whose value names are their own keep them.
 */
function withDistinctValueNames(named: Record<string, Json>): void {
  const owners = new Map<string, Set<string>>();
  for (const [title, schema] of Object.entries(named)) {
    for (const v of schema.enum as unknown[]) owners.set(constantName(v), (owners.get(constantName(v)) ?? new Set()).add(title));
  }
  for (const [title, schema] of Object.entries(named)) {
    const values = schema.enum as unknown[];
    if (values.some((v) => owners.get(constantName(v))!.size > 1)) schema['x-enum-varnames'] = values.map((v) => `${constantName(title)}_${constantName(v)}`);
  }
}

/**
 * The document with every named enum (an enum with a `title`: ExportJobStatus, Granularity,
 * ProtocolName, Plan …) stated once under components/schemas and referenced wherever it is used,
 * in operations and in the shared answers' headers, so a generated client has one enum type of
 * that name for every answer and parameter that carries it (inline, generators name a class per
 * operation, and a default on an inline enum left Go's client referring to a constant it never
 * declared). A use that says more than the enum (a default, nullable) wraps the reference in
 * allOf, since OpenAPI 3.0 ignores keywords beside a $ref. An enum without a title stays inline
 * (test/openapi-document.test.ts refuses any). A copy.
 */
export function withNamedEnums(doc: Json): Json {
  const named: Record<string, Json> = {};
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value !== 'object' || value === null) return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = visit(v);
    if (typeof out.title !== 'string' || !Array.isArray(out.enum)) return out;
    const { title, enum: values, type, description, ...more } = out;
    const core: Json = { type, title, enum: values };
    const known = named[title];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(core)) return out; // a different enum of the same name
    named[title] = core;
    const ref = { $ref: `#/components/schemas/${title}` };
    const said = description === undefined ? {} : { description };
    return Object.keys(more).length === 0 ? { ...ref, ...said } : { allOf: [ref], ...said, ...more };
  };
  const paths = visit(doc.paths);
  const components = (doc.components ?? {}) as Json;
  const responses = visit(components.responses);
  withDistinctValueNames(named);
  return {
    ...doc,
    paths,
    components: { ...components, ...(responses === undefined ? {} : { responses }), schemas: { ...(components.schemas as Json | undefined), ...named } },
  };
}
