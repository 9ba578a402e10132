// POST /admin/ingest: NDJSON records through the one ingest pipeline. Answers once the
// accepted records are stored and queryable. `?lane=backfill` sends a large file through the
// backfill lane (live records are written first; ingest/write-queue.ts) and shows its progress
// in GET /admin/ingest/status beside the rows each lane has queued.
import type { FastifyInstance } from 'fastify';
import { ndjsonRecords } from '../../../ingest/ndjson.ts';
import { positionText } from '../../../ingest/rejection.ts';
import { LANES, type Lane } from '../../../ingest/write-queue.ts';
import type { IngestPipeline } from '../../../ingest/pipeline.ts';
import { INGEST_MAX_LISTED_ERRORS } from '../../../core/limits/ingest.ts';

/** Rejected lines listed one by one (core/limits/ INGEST_MAX_LISTED_ERRORS). */
export { INGEST_MAX_LISTED_ERRORS as MAX_LISTED_ERRORS };

export async function ingestRoutes(app: FastifyInstance, opts: { pipeline: IngestPipeline; maxBodyBytes: number }): Promise<void> {
  // Any content type: operators send files with curl --data-binary, often as text/plain.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBodyBytes }, (_req, body, done) => done(null, body));

  const querystring = {
    type: 'object',
    properties: { lane: { type: 'string', enum: [...LANES], description: 'live (default) or backfill' } },
    additionalProperties: false,
  } as const;
  let backfills = 0;
  app.post<{ Querystring: { lane?: Lane } }>('/admin/ingest', { bodyLimit: opts.maxBodyBytes, schema: { querystring } }, async (req) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const lane = req.query.lane ?? 'live';
    if (lane === 'backfill') backfills += 1;
    // A backfill's progress is out of its records (split here only to count them).
    const progress = lane === 'backfill' ? opts.pipeline.backfills.start(`http:${backfills}`, ndjsonRecords(body).length) : undefined;
    const report = await opts.pipeline.ingestNdjson(body, 'http', { lane, progress }).finally(() => progress?.finish());
    return {
      accepted: report.accepted,
      rejected: report.rejected.length,
      duplicates: report.duplicates,
      errors: report.rejected.slice(0, INGEST_MAX_LISTED_ERRORS).map((r) => ({
        line: 'line' in r.position ? r.position.line : positionText(r.position),
        code: r.code,
        reason: r.detail,
      })),
      errorsOmitted: Math.max(0, report.rejected.length - INGEST_MAX_LISTED_ERRORS),
    };
  });

  // What each lane has queued for the writer, and the backfills running or recently finished.
  app.get('/admin/ingest/status', async () => ({
    lanes: opts.pipeline.queuedRows(),
    backfills: opts.pipeline.backfills.list(),
  }));
}
