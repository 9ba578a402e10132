// Every error body is {error, message} with the standard HTTP title of its status, errors
// raised by the framework itself (content type, body size, JSON syntax, routing) included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyed } from '../../api/services/access/route-policy.ts';
import { HTTP_TITLES, httpTitle, kindForStatus } from '../../core/errors.ts';
import { adminHeaders, apiKeyHeaders } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  ctx = await startApp();
  // A handler failing in an unexpected way: its cause must not reach the client.
  ctx.app.get('/api/v1/__boom', { config: keyed('rest', 'rest') }, async () => {
    throw new Error('secret internal detail at /srv/app/x.ts:12');
  });
  await ctx.app.ready();
});
afterAll(async () => ctx?.cleanup());

const postKeys = (payload: string, contentType: string) =>
  ctx.app.inject({ method: 'POST', url: '/admin/keys', headers: { ...adminHeaders(), 'content-type': contentType }, payload });

describe('framework errors carry the title of their status', () => {
  it('415 for an unsupported content type is "Unsupported Media Type"', async () => {
    const res = await postKeys('name=x&plan=free', 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({
      error: 'Unsupported Media Type',
      message: 'content type "application/x-www-form-urlencoded" is not accepted here; send application/json',
    });
  });

  it('400 for a body that is not JSON, and for an empty JSON body', async () => {
    const bad = await postKeys('{"name": ', 'application/json');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'Bad Request', message: 'request body is not valid JSON' });
    const empty = await postKeys('', 'application/json');
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ error: 'Bad Request', message: 'request body is empty but content-type is application/json' });
  });

  it('413 for a body over the limit is "Payload Too Large"', async () => {
    const res = await postKeys(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), plan: 'free' }), 'application/json');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'Payload Too Large', message: 'request body is larger than the limit for this endpoint' });
  });

  it('404 for an unknown route is "Not Found", with and without an operator path', async () => {
    const { 'x-api-key': key } = await apiKeyHeaders(ctx.app);
    const res = await ctx.app.inject({ method: 'GET', url: `/api/v1/nope?api-key=${key}` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Not Found', message: 'no route for GET /api/v1/nope' });
    const admin = await ctx.app.inject({ method: 'PUT', url: '/admin/protocols', headers: adminHeaders() });
    expect(admin.json()).toEqual({ error: 'Not Found', message: 'no route for PUT /admin/protocols' });
  });

  it('errors met while routing: a path that is not valid percent-encoding, an over-long path parameter', async () => {
    const headers = await apiKeyHeaders(ctx.app);
    const bad = await ctx.app.inject({ method: 'GET', url: '/api/v1/transactions/%E0%A4%A', headers });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'Bad Request', message: 'the request path is not valid percent-encoded UTF-8' });
    expect(bad.headers['x-ratelimit-plan']).toBe('free');
    expect(bad.headers['x-request-id']).toBeDefined();
    const long = await ctx.app.inject({ method: 'GET', url: `/api/v1/transactions/${'1'.repeat(200)}`, headers });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: 'URI Too Long', message: 'a path parameter is longer than the limit of 100 characters' });
    expect(long.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('405 with Allow for a method a path does not answer (QUERY, TRACE, PUT on a GET route), 404 for a path nobody answers', async () => {
    const headers = await apiKeyHeaders(ctx.app);
    for (const [method, url, allow] of [
      ['QUERY', '/api/v1/transactions/1111111111111111111111111111111111111111111111111111111111111111', 'GET, HEAD'],
      ['TRACE', '/api/v1/stats', 'GET, HEAD'],
      ['PUT', '/api/v1/transactions?limit=1', 'GET, HEAD'],
      ['GET', '/v1/query', 'POST'],
      ['DELETE', '/v1/exports/exp_x/cancel', 'POST'],
    ] as const) {
      const res = await ctx.app.inject({ method, url, headers });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toMatchObject({ error: 'Method Not Allowed' });
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
    // Without a key, a protected path is refused as unauthenticated first.
    expect((await ctx.app.inject({ method: 'PUT', url: '/api/v1/stats' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'PUT', url: '/api/v1/nothing-here', headers })).statusCode).toBe(404);
  });

  it('an unexpected failure is a 500 "Internal Server Error" that hides its cause', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/v1/__boom', headers: await apiKeyHeaders(ctx.app) });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Internal Server Error', message: 'Internal error' });
    expect(res.body).not.toContain('secret internal detail');
  });
});

describe('the one status -> title table', () => {
  it('has the standard reason phrases, and the catalog uses them', () => {
    expect(HTTP_TITLES[405]).toBe('Method Not Allowed');
    expect(HTTP_TITLES[406]).toBe('Not Acceptable');
    for (const status of [400, 401, 403, 404, 405, 406, 413, 414, 415, 429, 500, 503]) {
      expect(kindForStatus(status).title, String(status)).toBe(HTTP_TITLES[status]);
      expect(kindForStatus(status).http).toBe(status);
    }
    // A status outside the table still gets its class's phrase, never a wrong one.
    expect(httpTitle(418)).toBe('Bad Request');
    expect(kindForStatus(418)).toMatchObject({ http: 418, title: 'Bad Request' });
  });
});
