// Counts and times every HTTP request for /metrics. Labels are the route pattern
// (/api/v1/transactions/:signature), never the raw URL, so they stay few.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../../../core/metrics.ts';
import { policyOf } from './route-policy.ts';

export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = req.routeOptions.url ?? '(unmatched)';
    const labels = {
      interface: route === '(unmatched)' ? 'other' : policyOf(req).interface,
      route,
      method: req.method,
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
