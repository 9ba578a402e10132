// The bodies of the SQL door, each declared once (core/request-check.ts `request`) and
// checked by the one check: POST /v1/query (and its alias /api/v1/query), POST /v1/query/csv,
// and POST /v1/query/executions. The declaration holds the body's shape and limits (the
// query a non-blank string within SQL_MAX_LENGTH, the result format); the SQL text itself is
// then judged by the sandbox's guard. The routes' OpenAPI bodies are these schemas, and
// their refusals are the door's: 400 Invalid query (SPEC), naming `the query`.
import { Type, type TObject } from '@sinclair/typebox';
import { AppError, Errors } from '../../../core/errors.ts';
import { SQL_MAX_LENGTH } from '../../../core/limits/sql.ts';
import { checkRequest, request, type CheckedRequest, type RequestDecl } from '../../../core/request-check.ts';
import { ranBy, rulesDoc } from '../../../core/request-rules.ts';
import { PUBLISHED_TABLES } from '../../../warehouse/tables.ts';
import { SQL_DEFAULT_LIMIT, SQL_MAX_LIMIT } from '../../../core/limits/sql.ts';
import { SQL_EXAMPLES, SQL_LANGUAGE_RULE, sqlText } from './sql-text.ts';

/** The SQL text of a body: a non-blank string within the length limit, refused in SPEC's words. */
export const sqlQuery = (description: string, examples: readonly string[]) =>
  Type.Unsafe<string>({
    ...sqlText,
    examples: [...examples],
    description,
    'x-refusal': {
      type: 'must be a non-empty string',
      minLength: 'must be a non-empty string',
      pattern: 'must be a non-empty string',
      maxLength: `is longer than the maximum of ${SQL_MAX_LENGTH} characters`,
    },
  });

/** A result format of `values`, read in any case ("CSV" is csv); `refusal` words any other. */
const formatOf = (values: readonly string[], dflt: string, refusal: string, description: string) =>
  Type.Optional(
    Type.String({
      pattern: `^(?:${values.map((v) => [...v].map((c) => `[${c.toUpperCase()}${c}]`).join('')).join('|')})$`,
      default: dflt,
      description,
      'x-refusal': refusal,
    }),
  );

const JSON_OR_CSV = 'must be "json" or "csv"';
const ONE_SELECT =
  `One read-only SELECT (WITH, JOIN, GROUP BY … allowed) over ${PUBLISHED_TABLES.join(', ')}; ` +
  `at most ${SQL_MAX_LENGTH} characters; LIMIT at most ${SQL_MAX_LIMIT}, LIMIT ${SQL_DEFAULT_LIMIT} appended when absent`;
const BODY_WORDS = 'must be a JSON object {"query": "...", "format": "json" | "csv"}';
/** The body's own words: what it must be, a query left out, a field it does not have. Closed:
 *  a field no SQL body has is refused, never ignored (each of the door's bodies alike). */
const closedBody = (fields: string) => ({
  additionalProperties: false,
  'x-refusal': { type: BODY_WORDS, required: 'must be a non-empty string', additionalProperties: `has no field "{name}"; fields: ${fields}` },
});

/** POST /v1/query and /api/v1/query: JSON rows, or CSV when format says so. */
export const SQL_QUERY = request(
  Type.Object(
    { query: sqlQuery(ONE_SELECT, SQL_EXAMPLES), format: formatOf(['json', 'csv'], 'json', JSON_OR_CSV, 'json or csv (any case)') },
    closedBody('query, format'),
  ),
  'narrow',
  [ranBy(SQL_LANGUAGE_RULE)],
);

/** POST /v1/query/csv: the same query, answered as CSV only. */
export const SQL_CSV_QUERY = request(
  Type.Object(
    {
      query: sqlQuery(ONE_SELECT, SQL_EXAMPLES),
      format: formatOf(['csv'], 'csv', 'must be "csv" (or left out) on this route', 'csv (any case), or left out'),
    },
    closedBody('query, format'),
  ),
  'narrow',
  [ranBy(SQL_LANGUAGE_RULE)],
);

/** POST /v1/query/executions: the query run in the background, its result pages in `format`. */
export const SQL_EXECUTION = request(
  Type.Object(
    {
      query: sqlQuery('One read-only SELECT, as for POST /v1/query; no LIMIT is added', SQL_EXAMPLES),
      format: formatOf(['json', 'csv'], 'json', JSON_OR_CSV, 'json or csv (any case): the format of the result pages'),
    },
    closedBody('query, format'),
  ),
  'narrow',
  [ranBy(SQL_LANGUAGE_RULE)],
);

/** A declared body as the OpenAPI document shows it: its schema (format may also be null, "absent") and its rules. */
export function sqlBodySchema(decl: RequestDecl): ClosedObjectSchema {
  // The refusal words are the check's, not the document's.
  const { 'x-refusal': _body, ...body } = decl.schema;
  const { 'x-refusal': _query, ...query } = decl.schema.properties.query!;
  const { 'x-refusal': _format, ...format } = decl.schema.properties.format!;
  return {
    ...body,
    type: 'object',
    properties: { query, format: { ...format, type: ['string', 'null'] } },
    required: [...(decl.schema.required ?? [])],
    additionalProperties: false,
    ...rulesDoc(decl.rules),
  };
}

/** A closed JSON object schema (an OpenAPI body, an MCP tool's input). */
export type ClosedObjectSchema = { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties: false } & Record<
  string,
  unknown
>;

/**
 * A SQL body checked once: its query and its result format (lower case), or 400 Invalid query
 * naming `the query`, `format` or the body (`whole`: how the door names it, MCP's run_sql its
 * arguments). No body is a body without a query; null is absent.
 */
export function checkSqlBody<S extends TObject>(decl: RequestDecl<S>, body: unknown, whole = 'the body'): { query: string; format: string } {
  const values = body === undefined || body === null ? {} : body;
  try {
    if (typeof values !== 'object' || Array.isArray(values)) throw new AppError(Errors.invalidQuery, `${whole} ${BODY_WORDS}`);
    const c = checkRequest(decl, { values: values as Record<string, unknown> }, [], (path) =>
      path === '' ? whole : path === 'query' ? 'the query' : path,
    ) as CheckedRequest<S> & { query: string; format: string };
    return { query: c.query, format: c.format.toLowerCase() };
  } catch (err) {
    if (err instanceof AppError && err.kind === Errors.invalidParams) throw new AppError(Errors.invalidQuery, err.message, { field: err.field });
    throw err;
  }
}
