// HTTP adapter of SQL executions (executions.ts; docs/rest-and-sql.md, "SQL executions"):
//
//   POST /v1/query/executions                 {query, format}          -> 202 execution (an id at once)
//   GET  /v1/query/executions/:id                                      -> state and progress (a poll: its own window)
//   GET  /v1/query/executions/:id/results     ?cursor=&limit=          -> a page (JSON or CSV), total rows
//   POST /v1/query/executions/:id/cancel                               -> the execution
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import { EXECUTION_PAGE_MAX_ROWS, EXECUTION_POLLS_PER_MINUTE, EXECUTION_RESULT_TTL_HOURS, EXECUTION_TOKEN_MAX_CHARS } from '../../../core/limits/sql.ts';
import { SQL_EXECUTION, sqlBodySchema } from '../../services/sql/query-request.ts';
import { errors, jobParams, jobSchema } from '../../services/exports/export-schemas.ts';
import { INT64 } from '../../../core/vocabulary/primitives.ts';
import type { ExportOwner } from '../../services/exports/export-service.ts';
import { RESULT_FORMATS, type ExecutionService } from '../../services/exports/executions.ts';
import { JOB_STATUSES } from '../../services/exports/job-store.ts';
import { declareRoutes, keyed } from '../../services/access/route-policy.ts';

/** Headers of a results page: the total row count and the next page's cursor (also in a JSON body). */
export const EXECUTION_TOTAL_ROWS_HEADER = 'x-execution-total-rows';
export const EXECUTION_NEXT_CURSOR_HEADER = 'x-execution-next-cursor';

function ownerOf(req: FastifyRequest): ExportOwner {
  const key = req.apiKey;
  if (key === null) throw new AppError(Errors.unauthorized, 'API key required');
  return { id: key.id, plan: key.plan, budget: req.budget };
}

const nullable = (type: string) => ({ type: [type, 'null'] });
const int64 = { type: 'integer', format: INT64 } as const;
const executionSchema = {
  type: 'object',
  description: `An execution. Its results are kept ${EXECUTION_RESULT_TTL_HOURS} h after it finished, for the key that started it only`,
  properties: {
    id: { type: 'string' },
    state: { type: 'string', enum: [...JOB_STATUSES], title: 'ExportJobStatus' },
    progress: { ...jobSchema.properties.progress, description: '0-100, never backwards' },
    format: { type: 'string', enum: [...RESULT_FORMATS], title: 'ResultFormat' },
    totalRows: { ...nullable('integer'), format: INT64, description: 'Rows of the result, once COMPLETED' },
    columns: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' } } } },
    createdAt: { type: 'string', format: 'date-time' },
    startedAt: nullable('string'),
    finishedAt: nullable('string'),
    expiresAt: { ...nullable('string'), description: 'When the results are (or were) deleted' },
    error: nullable('string'),
    resultsPath: { ...nullable('string'), description: 'The first page, once COMPLETED' },
  },
} as const;
const pageSchema = {
  type: 'object',
  description: 'A page of results (format json). format csv: text/csv with a header row; the totals in headers',
  properties: {
    data: { type: 'array', items: { type: 'object', additionalProperties: true } },
    count: int64,
    totalRows: int64,
    offset: int64,
    nextCursor: { ...nullable('string'), description: 'Pass as cursor for the next page; null on the last' },
  },
} as const;
const idParam = jobParams('execution');

/** The OpenAPI tag of every route here. */
const tags = ['SQL executions'];
/** The execution schema under an answer's own description. */
const one = (description: string) => ({ ...executionSchema, description });

export async function executionRoutes(app: FastifyInstance, opts: { executions: ExecutionService }): Promise<void> {
  // The service checks bodies and queries (naming the field); answers are written as they are.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Executions answer pages of a client query's rows: the SQL door's budget.
  declareRoutes(app, keyed('sql', 'sql'));
  startRoute(app, opts.executions);
  stateRoutes(app, opts.executions);
  resultsRoute(app, opts.executions);
}

/** Starting an execution: its id at once, the query run in the background. */
function startRoute(app: FastifyInstance, svc: ExecutionService): void {
  app.post(
    '/v1/query/executions',
    {
      schema: {
        tags,
        operationId: 'createQueryExecution',
        summary: 'Start a SQL execution: an id at once, the query runs in the background',
        description:
          'The same sandbox, guard, cost check, budgets and fair sharing as POST /v1/query and SQL exports; ' +
          `no 30 s answer deadline and no ${EXECUTION_PAGE_MAX_ROWS}-row LIMIT on the whole result (the plan's export row cap applies). ` +
          `Poll GET /v1/query/executions/{id} (about once a second: ${EXECUTION_POLLS_PER_MINUTE} polls a minute per key, apart from the plan's requests), then page the results.`,
        body: sqlBodySchema(SQL_EXECUTION),
        response: { 202: one('The execution, QUEUED (or already RUNNING)'), ...errors(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req, reply) => reply.code(202).send(await svc.create(ownerOf(req), req.body)),
  );
}

/** An execution's state: polled (a window of its own), or cancelled. */
function stateRoutes(app: FastifyInstance, svc: ExecutionService): void {
  app.get<{ Params: { id: string } }>(
    '/v1/query/executions/:id',
    {
      schema: {
        tags,
        operationId: 'getQueryExecution',
        summary: `State and progress of an execution: a poll, charged against a window of ${EXECUTION_POLLS_PER_MINUTE} polls a minute per key instead of the plan's requests (an unknown id against both)`,
        params: idParam,
        response: { 200: one('The execution'), ...errors(401, 403, 404, 414, 429) },
      },
    },
    async (req) => {
      try {
        return svc.get(ownerOf(req), req.params.id);
      } catch (err) {
        // Polls spend only their own window; an id this key has no execution under is charged
        // like any request besides, so guessing ids spends the plan's window (execution-polls.ts).
        if (err instanceof AppError && err.kind === Errors.notFound) await req.consumeRateLimit(1);
        throw err;
      }
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/query/executions/:id/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelQueryExecution',
        summary: 'Cancel an execution (a finished one is answered as it is)',
        params: idParam,
        response: { 200: one('The execution'), ...errors(401, 403, 404, 414, 415, 429) },
      },
    },
    async (req) => svc.cancel(ownerOf(req), req.params.id),
  );
}

/** The pages of a completed execution's results, in its format, the totals also in headers. */
function resultsRoute(app: FastifyInstance, svc: ExecutionService): void {
  app.get<{ Params: { id: string }; Querystring: { cursor?: string; limit?: string } }>(
    '/v1/query/executions/:id/results',
    {
      // A cursor is one this execution's pages issued (nextCursor), not any string: others are 400.
      schema: {
        'x-cross-field-rules': [{ rule: 'issued', param: 'cursor', by: 'nextCursor' }],
        tags,
        operationId: 'getQueryExecutionResults',
        summary: `A page of an execution's results (at most ${EXECUTION_PAGE_MAX_ROWS} rows), in its format`,
        params: idParam,
        querystring: {
          type: 'object',
          properties: {
            cursor: { type: 'string', maxLength: EXECUTION_TOKEN_MAX_CHARS, description: 'nextCursor of the previous page; none for the first' },
            limit: { type: 'integer', minimum: 1, maximum: EXECUTION_PAGE_MAX_ROWS, default: EXECUTION_PAGE_MAX_ROWS },
          },
        },
        response: {
          200: { description: 'The page', content: { 'application/json': { schema: pageSchema }, 'text/csv': { schema: { type: 'string' } } } },
          ...errors(400, 401, 403, 404, 414, 429),
          409: { description: 'The execution has no results (QUEUED, RUNNING, FAILED or CANCELLED)', $ref: 'ErrorBody#' },
        },
      } as FastifySchema,
    },
    async (req, reply: FastifyReply) => {
      const page = await svc.page(ownerOf(req), req.params.id, req.query.cursor, req.query.limit);
      reply.header(EXECUTION_TOTAL_ROWS_HEADER, String(page.totalRows));
      if (page.nextCursor !== null) reply.header(EXECUTION_NEXT_CURSOR_HEADER, page.nextCursor);
      if (page.format === 'csv') return reply.type('text/csv; charset=utf-8').send(page.text ?? '');
      return reply
        .type('application/json; charset=utf-8')
        .send({ data: page.rows, count: page.count, totalRows: page.totalRows, offset: page.offset, nextCursor: page.nextCursor });
    },
  );
}
