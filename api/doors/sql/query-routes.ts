// POST /v1/query and its REST alias POST /api/v1/query: the SQL interface's HTTP adapter.
// It only maps the body onto its declared request (query-request.ts) and shapes the answer; the sandbox decides whether the query may
// run and runs it on its own engine sessions (see sql-sandbox.ts and sql-guard.ts).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyed } from '../../services/access/route-policy.ts';
import { SQL_MAX_RESPONSE_BYTES, type Caller, type SqlSandbox } from '../../services/sql/sql-sandbox.ts';
import { checkSqlBody, SQL_CSV_QUERY, SQL_QUERY, sqlBodySchema } from '../../services/sql/query-request.ts';
import { INT64 } from '../../../core/vocabulary/primitives.ts';

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
  body: sqlBodySchema(SQL_CSV_QUERY),
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
  body: sqlBodySchema(SQL_QUERY),
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

export async function sqlRoutes(app: FastifyInstance, opts: { sandbox: SqlSandbox }): Promise<void> {
  const { sandbox } = opts;

  const answer =
    (csvOnly: boolean) =>
    async (req: FastifyRequest<{ Body: unknown }>, reply: FastifyReply): Promise<unknown> => {
      // The body checked once (query-request.ts); the SQL text is then the sandbox's to judge.
      const { query, format } = checkSqlBody(csvOnly ? SQL_CSV_QUERY : SQL_QUERY, req.body);
      // Access control has authenticated the key before any handler runs.
      const caller: Caller = { key: req.apiKey?.id ?? req.ip, plan: req.apiKey?.plan ?? 'free', ...(req.budget === null ? {} : { budget: req.budget }) };
      if (format === 'json') return reply.type('application/json; charset=utf-8').send(await sandbox.json(caller, query));
      const csv = await sandbox.csv(caller, query);
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
        // The schema documents the body; the handler runs its one check (checkSqlBody), whose
        // refusals are SPEC's (400 Invalid query, "the query must be a non-empty string").
        validatorCompiler: () => () => true,
        // The JSON answer's rows are arbitrary: serialize them as they are.
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      answer(csvOnly),
    );
  }
}
