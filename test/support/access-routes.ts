// Test-only routes standing in for the real interfaces (/v1/rpc, /api/v1/*, /graphql), added
// by other modules: each declares the policy of the door it stands for (its route `config`,
// api/services/access/route-policy.ts), as those do, to show that the access hooks protect any route
// registered after buildApp(), with no change to them.
import type { FastifyInstance } from 'fastify';
import { invalidParams } from '../../core/errors.ts';
import { keyed } from '../../api/services/access/route-policy.ts';

const REST = { config: keyed('rest', 'rest') };

export function addAccessTestRoutes(app: FastifyInstance): void {
  app.get('/api/v1/__access-test', REST, async (req) => ({ ok: true, plan: req.apiKey?.plan ?? null }));
  app.get('/api/v1/__access-test/fail', REST, async () => {
    throw invalidParams('this test route always fails', 'x');
  });
  // Stands in for GraphQL's aliased queries: one request doing several units of work.
  app.post<{ Body: { units?: number } }>('/graphql/__access-test', { config: keyed('graphql', 'rest') }, async (req) => {
    await req.consumeRateLimit(req.body?.units ?? 0);
    return { ok: true };
  });
  // The JSON-RPC endpoint, unless the real adapter is already registered.
  if (!app.hasRoute({ method: 'POST', url: '/v1/rpc' })) {
    app.post('/v1/rpc', { config: keyed('rpc', 'rpc') }, async (req) => {
      const calls = Array.isArray(req.body) ? req.body : [req.body];
      const answers = calls.map((c) => ({ jsonrpc: '2.0', id: (c as { id?: unknown })?.id ?? null, result: 'ok' }));
      return Array.isArray(req.body) ? answers : answers[0];
    });
  }
}
