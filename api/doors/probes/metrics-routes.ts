// GET /metrics in the Prometheus text format. Protected by a bearer token: METRICS_TOKEN
// when set (give Prometheus that one, not the admin token), the admin token always. Wrong
// tokens spend the same per-address budget as wrong admin tokens (operator-auth.ts): the
// admin token is accepted here, so guessing it here must cost the same.
import type { FastifyInstance } from 'fastify';
import type { Access } from '../../services/access/access.ts';
import type { Metrics } from '../../../core/metrics.ts';
import { operatorTokenGuard } from '../../services/access/operator-auth.ts';
import { open } from '../../services/access/route-policy.ts';

export async function metricsRoutes(app: FastifyInstance, opts: { metrics: Metrics; access: Access; tokens: string[] }): Promise<void> {
  const guard = operatorTokenGuard(opts.access, opts.tokens, {
    missing: 'Metrics token required: send "Authorization: Bearer <METRICS_TOKEN or ADMIN_TOKEN>"',
    invalid: 'Invalid metrics token',
  });
  // No API key: the operator's (or metrics) token, checked by the guard.
  app.get('/metrics', { onRequest: guard, config: open() }, async (_req, reply) => {
    reply.header('content-type', opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
}
