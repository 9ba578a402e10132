// GET /metrics in the Prometheus text format. Protected by a bearer token: METRICS_TOKEN
// when set (give Prometheus that one, not the admin token), the admin token always.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError, Errors } from '../core/errors.ts';
import type { Metrics } from './access/metrics.ts';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export async function metricsRoutes(app: FastifyInstance, opts: { metrics: Metrics; tokens: string[] }): Promise<void> {
  const accepted = opts.tokens.map(digest);
  app.get('/metrics', async (req, reply) => {
    const header = req.headers.authorization;
    if (!header) throw new AppError(Errors.unauthorized, 'Metrics token required: send "Authorization: Bearer <METRICS_TOKEN or ADMIN_TOKEN>"');
    const m = /^Bearer\s+(.+)$/i.exec(header);
    const given = m ? digest(m[1]!.trim()) : undefined;
    // Every token is compared (no early exit) in constant time per comparison.
    const ok = given !== undefined && accepted.map((t) => timingSafeEqual(t, given)).includes(true);
    if (!ok) throw new AppError(Errors.forbidden, 'Invalid metrics token');
    reply.header('content-type', opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
}
