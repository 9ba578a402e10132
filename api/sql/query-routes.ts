// POST /v1/query and its REST alias POST /api/v1/query: the SQL interface's HTTP adapter.
// It only reads the body and shapes the answer; the sandbox decides whether the query may
// run and runs it on its own engine sessions (see sql-sandbox.ts and sql-guard.ts).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../core/errors.ts';
import { keyed } from '../access/route-policy.ts';
import { PUBLISHED_TABLES, SQL_DEFAULT_LIMIT, SQL_MAX_LENGTH, SQL_MAX_LIMIT } from './sql-guard.ts';
import { SQL_MAX_RESPONSE_BYTES, type Caller, type SqlSandbox } from './sql-sandbox.ts';
import { sqlText, SQL_LANGUAGE_RULE } from './sql-text.ts';
import { INT64 } from '../../core/vocabulary/primitives.ts';

const bodySchema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: {
      ...sqlText,
      description:
        `One read-only SELECT (WITH, JOIN, GROUP BY … allowed) over ${PUBLISHED_TABLES.join(', ')}; ` +
        `at most ${SQL_MAX_LENGTH} characters; LIMIT at most ${SQL_MAX_LIMIT}, LIMIT ${SQL_DEFAULT_LIMIT} appended when absent`,
    },
    // Read in any case ("CSV" is csv); null is the default.
    format: { type: ['string', 'null'], pattern: '^(?:[Jj][Ss][Oo][Nn]|[Cc][Ss][Vv])$', default: 'json', description: 'json or csv (any case)' },
  },
  'x-cross-field-rules': [SQL_LANGUAGE_RULE],
} as const;

const jsonAnswer = {
  type: 'object',
  description: 'Rows keyed by column name or alias (64-bit integers arrive as strings), their count, and the executed text',
  properties: {
    data: { type: 'array', items: { type: 'object', additionalProperties: true } },
    count: { type: 'integer', format: INT64 },
    query: { type: 'string', description: 'The executed SQL, including an injected LIMIT' },
  },
} as const;

const errorRef = (description: string) => ({ description, $ref: 'ErrorBody#' });

/** The CSV route's body: the same query; format may be left out (or say csv). */
const csvBodySchema = {
  ...bodySchema,
  properties: {
    ...bodySchema.properties,
    format: { type: ['string', 'null'], pattern: '^[Cc][Ss][Vv]$', default: 'csv', description: 'csv (any case), or left out' },
  },
} as const;

const COMMON_DESCRIPTION =
  'Rejected queries: 400 {error:"Invalid query", message}, also for a query whose ' +
  `estimated rows read exceed the plan's budget and for an answer over ${SQL_MAX_RESPONSE_BYTES / 1024 / 1024} MiB. ` +
  'Queries running longer than the time-out (30 s) are cancelled by the engine: 408. Client SQL runs on engine ' +
  'sessions of its own, one query per key at a time with a short queue: past it, 429 with Retry-After.';

const errorAnswers = {
  400: errorRef('Invalid query'),
  401: errorRef('API key missing'),
  403: errorRef('API key invalid'),
  408: errorRef('Query time-out: cancelled by the engine'),
  413: errorRef('Request body larger than the limit'),
  415: errorRef('Body is not application/json, or sent with a Content-Encoding other than identity'),
  429: errorRef('Rate limit exceeded, or too many SQL queries of this key (or in total) running or waiting'),
};

/**
 * The same query answered as CSV only. Generated clients (openapi-python-client among them)
 * decode an answer by the first media type its operation lists, so one operation answering
 * JSON or CSV by a body field cannot serve both to them: this one has CSV as its only type.
 */
const csvSchema = {
  tags: ['SQL'],
  summary: 'Run a read-only SQL query, answered as CSV',
  description:
    'The same query as POST /v1/query with format csv, for clients generated from this document (one media ' +
    'type per operation): text/csv; charset=utf-8, header row, RFC 4180 quoting, CRLF line ends, streamed. ' +
    COMMON_DESCRIPTION,
  body: csvBodySchema,
  response: {
    200: { description: 'Query result as CSV', content: { 'text/csv': { schema: { type: 'string' } } } },
    ...errorAnswers,
  },
};

const schema = {
  tags: ['SQL'],
  summary: 'Run a read-only SQL query',
  description:
    'format json (default): {data, count, query}. format csv: text/csv; charset=utf-8, header row, RFC 4180 ' +
    'quoting, CRLF line ends, streamed (generated clients: call POST /v1/query/csv for CSV, since they decode this ' +
    'operation\'s answers as JSON). Rejected queries: 400 {error:"Invalid query", message}, also for a query whose ' +
    `estimated rows read exceed the plan's budget and for an answer over ${SQL_MAX_RESPONSE_BYTES / 1024 / 1024} MiB. ` +
    'Queries running longer than the time-out (30 s) are cancelled by the engine: 408. Client SQL runs on engine ' +
    'sessions of its own, one query per key at a time with a short queue: past it, 429 with Retry-After.',
  body: bodySchema,
  response: {
    200: {
      description: 'Query result (JSON; CSV when format is csv)',
      content: {
        'application/json': { schema: jsonAnswer },
        'text/csv': { schema: { type: 'string' } },
      },
    },
    ...errorAnswers,
  },
};

/** The SQL interface's routes: SPEC's /v1/query and its REST alias, and /v1/query/csv (the
 *  same query answered as CSV only, for generated clients). */
const SQL_QUERY_PATHS: readonly string[] = ['/v1/query', '/api/v1/query', '/v1/query/csv'];

/** Each route and whether it answers CSV only. */
const SQL_ROUTES = SQL_QUERY_PATHS.map((url) => [url, url.endsWith('/csv')] as const);

/** The OpenAPI operationId of each route: one readable name per route (the REST alias is its own operation). */
const OPERATION_IDS: Readonly<Record<string, string>> = { '/v1/query': 'runQuery', '/api/v1/query': 'runRestQuery', '/v1/query/csv': 'runCsvQuery' };

interface Body {
  query?: unknown;
  format?: unknown;
}

export async function sqlRoutes(app: FastifyInstance, opts: { sandbox: SqlSandbox }): Promise<void> {
  const { sandbox } = opts;

  const answer =
    (csvOnly: boolean) =>
    async (req: FastifyRequest<{ Body: Body | undefined }>, reply: FastifyReply): Promise<unknown> => {
      const body = req.body;
      // No body at all is an empty query; a body of the wrong shape gets told the right one.
      if (body === undefined || body === null) throw new AppError(Errors.invalidQuery, 'the query must be a non-empty string');
      if (typeof body !== 'object' || Array.isArray(body)) {
        throw new AppError(Errors.invalidQuery, 'the body must be a JSON object {"query": "...", "format": "json" | "csv"}');
      }
      // "CSV" is as clear as "csv"; anything else is refused rather than guessed.
      const format = typeof body.format === 'string' ? body.format.toLowerCase() : (body.format ?? (csvOnly ? 'csv' : 'json'));
      if (csvOnly ? format !== 'csv' : format !== 'json' && format !== 'csv') {
        throw new AppError(Errors.invalidQuery, csvOnly ? 'format must be "csv" (or left out) on this route' : 'format must be "json" or "csv"');
      }
      // Access control has authenticated the key before any handler runs.
      const caller: Caller = { key: req.apiKey?.id ?? req.ip, plan: req.apiKey?.plan ?? 'free', ...(req.budget === null ? {} : { budget: req.budget }) };
      if (format === 'json') return reply.type('application/json; charset=utf-8').send(await sandbox.json(caller, body.query));
      const csv = await sandbox.csv(caller, body.query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'inline; filename="query.csv"')
        .send(Readable.from(csv.body, { objectMode: false }));
    };

  for (const [url, csvOnly] of SQL_ROUTES) {
    app.post(
      url,
      {
        schema: { ...(csvOnly ? csvSchema : schema), operationId: OPERATION_IDS[url] },
        config: keyed('sql', 'sql'),
        // The schema documents the body; the handler checks it, so that a missing or
        // non-string query gets the message SPEC requires instead of a generic one.
        validatorCompiler: () => () => true,
        // The JSON answer's rows are arbitrary: serialize them as they are.
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      answer(csvOnly),
    );
  }
}
