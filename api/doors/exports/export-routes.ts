// HTTP adapter of the export jobs (docs/exports.md): bulk SQL exports for clients without
// GraphQL, filter exports for the CLI, and the downloads. Every route but the signed link
// sits behind access control (registered after it in buildApp); the signed link carries
// its own proof (download-links.ts) and declares that it needs no key (config: open()).
//
//   POST /v1/query/exports            {query, format, sampling, splits, seed}     -> 202 job
//   POST /v1/exports                  {format, filters, columns, sampling, splits, seed} -> 202 job
//   GET  /v1/{query/,}exports          ?first=&after=                               -> {jobs, hasNextPage, endCursor}
//   GET  /v1/{query/,}exports/:id                                                   -> job (links re-minted)
//   POST /v1/{query/,}exports/:id/cancel                                            -> job
//   GET  /v1/{query/,}exports/:id/files/:name      (Range, If-Range, ETag)          -> the file
//   GET  /v1/exports/links/:id/:name?key=&expires=&sig=  (no key; Range as above)   -> the file
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, worded, type Wording } from '../../../core/errors.ts';
import { declareRoutes, keyed, open } from '../../services/access/route-policy.ts';
import { SIGNED_LINK_PREFIX } from '../../services/exports/download-links.ts';
import { appendVary, CALLER_HEADERS } from '../../services/answers/vary.ts';
import { fileDigest } from '../../services/exports/export-writer.ts';
import {
  errors,
  FILE_MEDIA_TYPE,
  fileParams,
  fileResponses,
  filterBody,
  jobParams,
  jobSchema,
  linkQuery,
  listQuery,
  pageSchema,
  sqlBody,
} from '../../services/exports/export-schemas.ts';
import type { ExportFileHandle, ExportOwner, ExportService } from '../../services/exports/export-service.ts';

/** This interface's names for the logical keys: the body's own field names. */
const WORDING: Wording = {
  params: { job: 'id', cursor: 'after' },
  hints: { protocols: 'GET /api/v1/stats lists the available ones', coarserBucket: 'ask for fewer, larger buckets' },
};

const wordedErrors = async <T>(work: () => T | Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (err) {
    throw worded(err, WORDING);
  }
};

function ownerOf(req: FastifyRequest): ExportOwner {
  // Access control ran before every route here and set the key.
  const key = req.apiKey;
  if (key === null) throw new AppError(Errors.unauthorized, 'API key required');
  return { id: key.id, plan: key.plan, budget: req.budget };
}

/** The two kinds of export job, by route base, and the noun their operationIds use (listSqlExports, getExport …). */
const JOB_BASES = [
  ['/v1/query/exports', 'SqlExport'],
  ['/v1/exports', 'Export'],
] as const;

/** The OpenAPI tag of every route here. */
const tags = ['Exports'];

export async function exportRoutes(app: FastifyInstance, opts: { exports: ExportService }): Promise<void> {
  // Bodies and queries are checked by the service, which names the field at fault; answers
  // are written as they are (the schemas document them for the OpenAPI document).
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Export jobs are a door of their own (their answers are files); a file's download another.
  declareRoutes(app, keyed('other', 'export'));
  creationRoutes(app, opts.exports);
  for (const [base, noun] of JOB_BASES) jobRoutes(app, opts.exports, base, noun);
  signedLinkRoute(app, opts.exports);
}

/** The two routes that start a job: one of a SQL SELECT, one of filters. */
function creationRoutes(app: FastifyInstance, svc: ExportService): void {
  const created = { 202: { description: 'The job, QUEUED (or already RUNNING)', ...jobSchema }, ...errors(400, 401, 403, 413, 415, 429) };

  app.post(
    '/v1/query/exports',
    {
      schema: { tags, operationId: 'createSqlExport', summary: 'Export the rows of a SQL SELECT to files (background job)', body: sqlBody, response: created },
    },
    async (req, reply) => reply.code(202).send(await wordedErrors(() => svc.createSql(ownerOf(req), req.body))),
  );
  app.post(
    '/v1/exports',
    {
      schema: { tags, operationId: 'createExport', summary: 'Export transactions by filters to files (background job)', body: filterBody, response: created },
    },
    async (req, reply) => reply.code(202).send(await wordedErrors(() => svc.create(ownerOf(req), req.body))),
  );
}

/** The routes of one kind of job, under `base`: list, read, cancel, download a file. */
function jobRoutes(app: FastifyInstance, svc: ExportService, base: string, noun: string): void {
  app.get(
    base,
    {
      schema: {
        tags,
        operationId: `list${noun}s`,
        summary: 'Your export jobs, newest first',
        querystring: listQuery,
        // A cursor is one this listing issued (endCursor), not any string: others are 400.
        'x-cross-field-rules': [{ rule: 'issued', param: 'after', by: 'endCursor' }],
        response: { 200: { description: 'A page of jobs', ...pageSchema }, ...errors(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const q = req.query as Record<string, string | undefined>;
      const first = q.first === undefined ? undefined : /^\d{1,4}$/.test(q.first) ? Number(q.first) : NaN;
      // REST's page, as SPEC shapes it: the jobs, whether more follow, and the cursor to go on from.
      const { jobs, hasNextPage, endCursor } = await wordedErrors(() => svc.list(ownerOf(req), { first, after: q.after ?? null }));
      return { jobs, hasNextPage, endCursor };
    },
  );
  app.get<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        operationId: `get${noun}`,
        summary: 'One export job: status, progress, files and fresh download links',
        params: jobParams('job'),
        response: { 200: { description: 'The job', ...jobSchema }, ...errors(401, 403, 404, 414, 429) },
      },
    },
    async (req) => wordedErrors(() => svc.get(ownerOf(req), req.params.id)),
  );
  app.post<{ Params: { id: string } }>(
    `${base}/:id/cancel`,
    {
      schema: {
        tags,
        operationId: `cancel${noun}`,
        summary: 'Cancel an export job (a finished job is answered as it is)',
        params: jobParams('job'),
        response: { 200: { description: 'The job', ...jobSchema }, ...errors(400, 401, 403, 404, 414, 415, 429) },
      },
    },
    async (req) => wordedErrors(() => svc.cancel(ownerOf(req), req.params.id)),
  );
  app.get<{ Params: { id: string; name: string } }>(
    `${base}/:id/files/:name`,
    {
      config: keyed('other', 'download'),
      schema: {
        tags,
        operationId: `download${noun}File`,
        summary: 'Download a file of a completed job (Range, If-Range, ETag)',
        params: fileParams,
        response: { ...fileResponses, ...errors(401, 403, 404, 414, 416, 429) },
      },
    },
    async (req, reply) => sendFile(req, reply, await wordedErrors(() => svc.openFile(ownerOf(req), req.params.id, req.params.name))),
  );
}

/** The download through a signed link: no key, the link its own credential (download-links.ts). */
function signedLinkRoute(app: FastifyInstance, svc: ExportService): void {
  app.get<{ Params: { id: string; name: string } }>(
    `${SIGNED_LINK_PREFIX}:id/:name`,
    {
      // No key: the link is its own credential, checked here.
      config: open(),
      schema: {
        tags,
        operationId: 'downloadExportLink',
        summary: "Download through a signed link (no API key; expires, and stops with the key's revocation)",
        security: [],
        params: fileParams,
        querystring: linkQuery,
        response: { ...fileResponses, ...errors(403, 404, 414, 416, 429) },
      },
    },
    async (req, reply) => {
      // A link is a credential of its own, so its downloads count against the issuing key's
      // rate limit, and refused links against the client's address, as requests without a
      // valid key do: the route needs no key, but is not exempt from limits.
      let handle: Awaited<ReturnType<ExportService['openLink']>>;
      try {
        handle = await svc.openLink(req.params.id, req.params.name, req.query as Record<string, unknown>);
      } catch (err) {
        if (err instanceof AppError && err.kind === Errors.forbidden) await req.consumeRateLimitOf(null);
        throw err;
      }
      await req.consumeRateLimitOf(handle.key);
      return sendFile(req, reply, handle);
    },
  );
}

/**
 * Send a file with ranges: `Range: bytes=a-b` (one range; anything else, or a range ending
 * before it starts, gets the whole file), honoured only when `If-Range` is absent or equals the strong ETag (the sha256),
 * so a download resumed after the file changed restarts rather than splicing two files.
 */
async function sendFile(req: FastifyRequest, reply: FastifyReply, h: ExportFileHandle): Promise<FastifyReply> {
  let size: number;
  try {
    size = (await stat(h.file)).size;
  } catch {
    throw new AppError(Errors.notFound, 'no such file in this export job (it may have expired)');
  }
  const sha256 = h.sha256 !== '' ? h.sha256 : (await fileDigest(h.file)).sha256;
  const etag = `"${sha256}"`;
  reply
    .header('accept-ranges', 'bytes')
    .header('etag', etag)
    .header('cache-control', 'private, no-cache')
    .header('content-disposition', `attachment; filename="${h.name.replace(/[^\w.-]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(h.name)}`)
    .type(FILE_MEDIA_TYPE);
  // A stored copy belongs to the key that fetched it (a signed link's credential is in its URL).
  appendVary(reply, ...CALLER_HEADERS);
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  const range = req.headers.range;
  const ifRange = req.headers['if-range'];
  const m = typeof range === 'string' ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  // RFC 9110 section 14.1.1: a range whose last byte comes before its first is invalid, and
  // an invalid Range header is ignored (the whole file, 200), unlike a valid one past the end (416).
  const invalid = m !== null && m[1] !== '' && m[2] !== '' && Number(m[2]) < Number(m[1]);
  if (m !== null && !invalid && (m[1] !== '' || m[2] !== '') && (ifRange === undefined || ifRange === etag)) {
    let start: number;
    let end: number;
    if (m[1] === '') {
      // Suffix range: the last N bytes.
      start = Math.max(0, size - Number(m[2]));
      end = size - 1;
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    }
    if (start >= size || start > end) {
      return reply
        .code(416)
        .header('content-range', `bytes */${size}`)
        .type('application/json; charset=utf-8')
        .send({ error: 'Range Not Satisfiable', message: `the file has ${size} bytes` });
    }
    reply
      .code(206)
      .header('content-range', `bytes ${start}-${end}/${size}`)
      .header('content-length', String(end - start + 1));
    return reply.send(size === 0 ? '' : createReadStream(h.file, { start, end }));
  }
  reply.code(200).header('content-length', String(size));
  return reply.send(createReadStream(h.file));
}
