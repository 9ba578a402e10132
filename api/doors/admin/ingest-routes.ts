// POST /admin/ingest: NDJSON records through the one ingest pipeline. Answers once the
// accepted records are stored and queryable.
import type { FastifyInstance } from 'fastify';
import { ndjsonRecords } from '../../../ingest/ndjson.ts';
import { positionText } from '../../../ingest/rejection.ts';
import type { IngestPipeline } from '../../../ingest/pipeline.ts';
import { INGEST_MAX_LISTED_ERRORS } from '../../../core/limits/ingest.ts';

/** Rejected lines listed one by one (core/limits/ INGEST_MAX_LISTED_ERRORS). */
export { INGEST_MAX_LISTED_ERRORS as MAX_LISTED_ERRORS };

export async function ingestRoutes(app: FastifyInstance, opts: { pipeline: IngestPipeline; maxBodyBytes: number }): Promise<void> {
  // Any content type: operators send files with curl --data-binary, often as text/plain.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBodyBytes }, (_req, body, done) => done(null, body));

  app.post('/admin/ingest', { bodyLimit: opts.maxBodyBytes }, async (req) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const report = await opts.pipeline.ingest(ndjsonRecords(body), 'http');
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
}
