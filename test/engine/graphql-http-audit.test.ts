// The graphql-http audit of GraphQL-over-HTTP (every server audit of graphql-http 1.23)
// against a real listening server with a real key: every audit must pass. docs/graphql.md
// states the result.
import type { AddressInfo } from 'node:net';
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let url: string;
let key: string;

beforeAll(async () => {
  t = await startApp();
  key = (await apiKeyHeaders(t.app))['x-api-key']!;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => t?.cleanup());

/** fetch with the key on every request, as a client of this service sends it. */
const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
  const headers = new Headers(init.headers);
  headers.set('x-api-key', key);
  return fetch(input, { ...init, headers });
};

describe('graphql-http server audits', () => {
  const audits = serverAudits({ url: () => url, fetchFn });

  it('runs all 61 audits', () => {
    expect(audits).toHaveLength(61);
  });

  it.each(audits.map((a) => [`${a.id} ${a.name}`, a] as const))('%s', async (_name, audit) => {
    const result = await audit.fn();
    expect(result.status, result.status === 'ok' ? '' : `${result.reason}`).toBe('ok');
  });
});
