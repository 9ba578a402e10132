// Headers that authenticate a test request. Every interface test sends these: a real key
// created through the operator API (POST /admin/keys), so tests exercise the same path
// clients do. One key per app and plan, created once and reused.
import type { FastifyInstance } from 'fastify';
import type { Plan } from '../../core/plans.ts';
import { ADMIN_TOKEN } from './admin-token.ts';

const keys = new WeakMap<FastifyInstance, Map<Plan, Promise<string>>>();

/** Create a key through the operator API and return its secret. */
export async function createKey(app: FastifyInstance, plan: Plan, name = `test-${plan}`): Promise<{ id: string; key: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/admin/keys',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { name, plan },
  });
  if (res.statusCode !== 201) throw new Error(`creating a ${plan} test key failed: ${res.statusCode} ${res.body}`);
  const body = res.json<{ id: string; key: string }>();
  return { id: body.id, key: body.key };
}

export async function apiKeyHeaders(app: FastifyInstance, plan: Plan = 'enterprise'): Promise<Record<string, string>> {
  let perPlan = keys.get(app);
  if (!perPlan) {
    perPlan = new Map();
    keys.set(app, perPlan);
  }
  let key = perPlan.get(plan);
  if (!key) {
    key = createKey(app, plan).then((k) => k.key);
    // A failed creation is not cached: the next call tries again.
    key.catch(() => perPlan.delete(plan));
    perPlan.set(plan, key);
  }
  return { 'x-api-key': await key };
}

/** Operator headers (admin bearer token). */
export const adminHeaders = (): Record<string, string> => ({ authorization: `Bearer ${ADMIN_TOKEN}` });
