// Route policy (api/services/access/route-policy.ts): each route declares in its `config` whether it
// needs a key, its door and its interface, and access control reads that, not the path. A
// route that declares nothing needs a key; so does a path no route answers, except an OAuth
// or discovery path no route serves (MCP clients read its 401 as "sign in"), and a method a
// public path does not answer (its 405).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undeclaredRoutes } from '../../api/services/access/allowed-methods.ts';
import { keyed, open } from '../../api/services/access/route-policy.ts';
import { ANSWER_BUDGET_BYTES } from '../../core/limits/answers.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp();
  // A route under a public-looking path that declares nothing, one that declares itself public
  // under the REST base, and a keyed one at the SQL door.
  t.app.get('/dashboard-like/undeclared', async (req) => ({ answer: req.budget?.answerBytes ?? null }));
  t.app.get('/health/undeclared', async () => ({ ok: true }));
  t.app.get('/api/v1/__open', { config: open('rest') }, async (req) => ({ key: req.apiKey?.id ?? null, budget: req.budget === null ? null : 'granted' }));
  t.app.get('/v1/__sql-door', { config: keyed('sql', 'sql') }, async (req) => ({ answer: req.budget?.answerBytes ?? null }));
  headers = await apiKeyHeaders(t.app);
});
afterAll(async () => t?.cleanup());

const get = (url: string, h: Record<string, string> = {}, method: 'GET' | 'PUT' = 'GET') => t.app.inject({ method, url, headers: h });

describe('route policy', () => {
  it('a route that declares nothing needs a key, whatever its path, and gets the REST door', async () => {
    for (const url of ['/dashboard-like/undeclared', '/health/undeclared']) expect((await get(url)).statusCode, url).toBe(401);
    const res = await get('/dashboard-like/undeclared', headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ answer: ANSWER_BUDGET_BYTES.rest });
  });

  it('a route declared public answers without a key, and gets no budget, even under the REST base', async () => {
    const res = await get('/api/v1/__open');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ key: null, budget: null });
  });

  it('a keyed route gets the budget of the door it declares', async () => {
    expect((await get('/v1/__sql-door')).statusCode).toBe(401);
    expect((await get('/v1/__sql-door', headers)).json()).toEqual({ answer: ANSWER_BUDGET_BYTES.sql });
  });

  it('the service declares its public routes: descriptions, health, GraphiQL files, the dashboard', async () => {
    for (const url of [
      '/health',
      '/api/v1/openapi.json',
      '/api/v1/docs',
      '/v1/openrpc.json',
      '/llms.txt',
      '/graphql/graphiql.js',
      '/graphql/graphiql.css',
      '/dashboard',
    ]) {
      expect((await get(url)).statusCode, url).not.toBe(401);
    }
    for (const url of ['/v1/metrics', '/api/v1/stats', '/v1/exports', '/v1/query/executions/x']) expect((await get(url)).statusCode, url).toBe(401);
  });

  it("a path no route answers needs a key, except an OAuth or discovery path no route serves; a public path's 405 needs none", async () => {
    expect((await get('/nothing-here')).statusCode).toBe(401);
    expect((await get('/api/v1/nothing-here')).statusCode).toBe(401);
    expect((await get('/nothing-here', headers)).statusCode).toBe(404);
    expect((await get('/.well-known/oauth-protected-resource')).statusCode).toBe(404);
    expect((await get('/health', {}, 'PUT')).statusCode).toBe(405);
    expect((await get('/api/v1/stats', {}, 'PUT')).statusCode).toBe(401);
  });
});

describe("the service's routes", () => {
  it('every route of buildApp() declares its policy (none left to the fail-closed default)', async () => {
    // Only the two this file adds on purpose declare nothing.
    expect(undeclaredRoutes(t.app.routeTable).sort()).toEqual([
      'GET /dashboard-like/undeclared',
      'GET /health/undeclared',
      'HEAD /dashboard-like/undeclared',
      'HEAD /health/undeclared',
    ]);
  });
});
