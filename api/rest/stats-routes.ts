// GET /api/v1/stats: whole-database figures, from the hourly view and system.parts.
import type { FastifyInstance } from 'fastify';
import type { Analytics } from '../analytics/analytics.ts';
import { envelope, errors, globalStats } from './schemas.ts';

export async function statsRoutes(app: FastifyInstance, opts: { analytics: Analytics }): Promise<void> {
  app.get('/stats', {
    schema: {
      tags: ['REST'],
      summary: 'Global statistics',
      description: 'Totals, success and failure, per-protocol counts, first and last block time, latest slot over the ' +
        'active protocols (from the hourly view), and storage size per table (system.parts). Never scans the base table.',
      response: { 200: envelope(globalStats, 'Global statistics'), ...errors(401, 403, 429) },
    },
  }, async () => ({ success: true, data: await opts.analytics.globalStats(), meta: { count: 1 } }));
}
