// The MCP door as clients nobody here wrote meet it (issue 38, item 4): a client without a key
// (the SDK's, and one that can do OAuth, as mcp-remote and the Inspector are) is told to send a
// key instead of being sent off to OAuth; a page on another origin can reach /mcp and /llms.txt;
// resources/templates/list is answered; an error's message carries the SDK's prefix once.
// The official SDK's own client and its OAuth discovery functions, against a listening server.
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyChallenge, MISSING_KEY_MESSAGE_BEARER, NO_OAUTH_MESSAGE } from '../../api/services/access/presented-key.ts';
import { CORS_ALLOWED_HEADERS } from '../../api/services/access/cors.ts';
import { isUnservedOAuth } from '../../api/services/access/route-policy.ts';
import { createKey } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let base: string;
let key: string;

beforeAll(async () => {
  t = await startApp();
  key = (await createKey(t.app, 'enterprise', 'mcp-clients')).key;
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
}, 120_000);
afterAll(async () => t?.cleanup());

/** Every request a client made, with its answer's status, in order. */
type Seen = { method: string; path: string; status: number }[];

/** A fetch that records what goes through it (the SDK's transport and its OAuth discovery both use it). */
function recording(seen: Seen): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    seen.push({ method: init?.method ?? (input instanceof Request ? input.method : 'GET'), path: url.pathname, status: res.status });
    return res;
  };
}

/** What mcp-remote and the Inspector give the SDK's transport: an OAuth provider (here one that
 *  records whether it was asked to send the user to an authorization page). */
class RecordingProvider implements OAuthClientProvider {
  redirected: URL[] = [];
  private client: OAuthClientInformationMixed | undefined;
  constructor(private readonly token?: string) {}
  get redirectUrl(): string {
    return 'http://127.0.0.1:1/oauth/callback';
  }
  get clientMetadata() {
    return {
      redirect_uris: [this.redirectUrl],
      client_name: 'recording',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  // The key as the bearer token: how such a client is given a key it already has.
  tokens(): OAuthTokens | undefined {
    return this.token === undefined ? undefined : { access_token: this.token, token_type: 'Bearer' };
  }
  saveTokens() {}
  redirectToAuthorization(url: URL) {
    this.redirected.push(url);
  }
  saveCodeVerifier() {}
  codeVerifier() {
    return 'unused';
  }
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

async function connect(headers: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'mcp-clients-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return c;
}

/** Resolves once `cond` holds (each check a turn later). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

describe('a client without a key', () => {
  it('gets a 401 that names the API-key scheme and how to send a key, with no OAuth parameter', async () => {
    for (const res of [await post(initialize), await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' } })]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Unauthorized', message: MISSING_KEY_MESSAGE_BEARER });
      const challenge = res.headers.get('www-authenticate');
      expect(challenge).toBe(keyChallenge(true));
      expect(challenge).toMatch(/^ApiKey realm="[^"]+", header="x-api-key", query="api-key", Bearer realm="[^"]+"$/);
      // What the SDK's client reads of a challenge: no resource metadata, scope or error to act on.
      expect(extractWWWAuthenticateParams(res)).toEqual({});
    }
    // The other doors challenge too, with the one scheme they take.
    const rpc = await fetch(`${base}/v1/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(rpc.status).toBe(401);
    expect(rpc.headers.get('www-authenticate')).toBe(keyChallenge(false));
  });

  it("the SDK's client fails at connect with the 401 and its message", async () => {
    const err = await connect({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect(err).toMatchObject({ code: 401 });
    expect((err as Error).message).toContain('API key required: send it as \\"Authorization: Bearer <key>\\"');
  });

  it('finds no OAuth: every discovery document is 404 and says how to send a key; other unknown paths still need a key', async () => {
    const discovery = [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/openid-configuration',
      '/.well-known/openid-configuration/mcp',
    ];
    for (const path of discovery) {
      // As the SDK asks: with its protocol-version header.
      const res = await fetch(`${base}${path}`, { headers: { 'mcp-protocol-version': '2025-06-18', accept: 'application/json' } });
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: string; message: string; error_description: string };
      expect(body).toEqual({ error: 'Not Found', message: `no route for GET ${path}: ${NO_OAUTH_MESSAGE}`, error_description: body.message });
    }
    // The endpoints a client falls back to when there is no metadata: 404 too, and never 401
    // (mcp-remote refused a registration with 401 waits for a browser sign-in that never comes).
    for (const [method, path] of [
      ['POST', '/register'],
      ['GET', '/authorize'],
      ['POST', '/token'],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { message: string }).message).toContain(NO_OAUTH_MESSAGE);
    }
    expect((await fetch(`${base}/.well-known/security.txt`)).status).toBe(404);
    // Fail-closed everywhere else: an unknown path needs a key, and so would a route added there.
    for (const path of ['/registerx', '/.well-knownx', '/oauth/token', '/mcp/.well-known/openid-configuration']) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(401);
    }
    // A route served there later is not unserved: it needs a key unless it declares itself public.
    expect(isUnservedOAuth('/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource')).toBe(false);
    expect(isUnservedOAuth('/register', '/register')).toBe(false);
    // The SDK's own discovery reads that as "no OAuth here".
    await expect(discoverOAuthProtectedResourceMetadata(`${base}/mcp`)).rejects.toThrow(/does not implement OAuth 2.0 Protected Resource Metadata/);
    expect(await discoverAuthorizationServerMetadata(base)).toBeUndefined();
  });

  it('a client that can do OAuth (as mcp-remote and the Inspector) is told to send a key, and never sent to sign in', async () => {
    const seen: Seen = [];
    const provider = new RecordingProvider();
    const c = new Client({ name: 'oauth-capable', version: '1.0.0' });
    const err = await c
      .connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider, fetch: recording(seen) }))
      .catch((e: unknown) => e);
    expect((err as Error).message).toContain(MISSING_KEY_MESSAGE_BEARER.slice(0, 40));
    expect(provider.redirected).toEqual([]);
    // Its discovery, and the registration it falls back to, were each answered 404.
    const oauth = seen.filter((s) => s.path.startsWith('/.well-known/') || s.path === '/register');
    expect(oauth.map((s) => s.path)).toContain('/register');
    expect(
      oauth.every((s) => s.status === 404),
      JSON.stringify(seen),
    ).toBe(true);
  });
});

describe('a client with a key', () => {
  it("given as a bearer token, is never sent to OAuth: GET /mcp (the SDK's optional event stream) is 405, not 401", async () => {
    const get = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const seen: Seen = [];
    const provider = new RecordingProvider(key);
    const c = new Client({ name: 'oauth-capable', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider, fetch: recording(seen) }));
    expect((await c.listTools()).tools.length).toBeGreaterThan(10);
    // After `initialized` the transport opens its GET stream on its own: wait for its answer.
    await until(() => seen.some((s) => s.method === 'GET' && s.path === '/mcp'));
    expect(seen.find((s) => s.method === 'GET')).toMatchObject({ path: '/mcp', status: 405 });
    expect(seen.filter((s) => s.status === 401 || s.path.startsWith('/.well-known/') || s.path === '/register')).toEqual([]);
    expect(provider.redirected).toEqual([]);
    await c.close();
  });

  it('resources/templates/list is answered (resources are declared): an empty list', async () => {
    const c = await connect({ 'x-api-key': key });
    expect(c.getServerCapabilities()?.resources).toBeDefined();
    expect(await c.listResourceTemplates()).toEqual({ resourceTemplates: [] });
    await c.close();
  });

  it('errors read with one "MCP error <code>:" prefix: the server never sends one itself', async () => {
    const c = await connect({ 'x-api-key': key });
    await expect(c.callTool({ name: 'getNothing', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: unknown tool "getNothing"; tools\/list lists the tools$/,
    );
    await expect(c.readResource({ uri: 'txa://nothing' })).rejects.toThrow(/^MCP error -32602: unknown resource "txa:\/\/nothing"/);
    await c.close();
    // On the wire: the SDK's own refusals (its tools/call check) as well as the door's.
    const raw = await post(
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getNothing', arguments: {} } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5, arguments: {} } },
        { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 5 } },
        { jsonrpc: '2.0', id: 4, method: 'prompts/list' },
      ],
      { 'x-api-key': key },
    );
    const answers = (await raw.json()) as { id: number; error: { code: number; message: string } }[];
    expect(answers.map((a) => a.error.code)).toEqual([-32602, -32602, -32602, -32601]);
    for (const a of answers) expect(a.error.message, a.error.message).not.toMatch(/^MCP error/);
    expect(answers[1]!.error.message).toMatch(/^Invalid tools\/call request: /);
  });
});

describe('a page on another origin', () => {
  const origin = 'https://agent.example.net';

  it("gets /mcp's preflight answered 204 without a key, with the headers an MCP client sends", async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toBe('POST, OPTIONS');
    const allowed = String(res.headers['access-control-allow-headers']).split(', ');
    for (const h of ['authorization', 'content-type', 'accept', 'x-api-key', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'])
      expect(allowed).toContain(h);
    expect(allowed).toEqual([...CORS_ALLOWED_HEADERS]);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it("reads /mcp's answers, its 401 and challenge included, and /llms.txt", async () => {
    const ok = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { origin, 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: initialize,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    const refused = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: initialize,
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect(String(refused.headers['access-control-expose-headers']).split(', ')).toContain('www-authenticate');
    const llms = await t.app.inject({ method: 'GET', url: '/llms.txt', headers: { origin } });
    expect(llms.statusCode).toBe(200);
    expect(llms.headers['access-control-allow-origin']).toBe('*');
    expect((await t.app.inject({ method: 'OPTIONS', url: '/llms.txt', headers: { origin, 'access-control-request-method': 'GET' } })).statusCode).toBe(204);
  });
});
