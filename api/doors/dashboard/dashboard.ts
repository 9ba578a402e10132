// The dashboard web app at /dashboard, served by the API process: static pages (plain ES
// modules from api/doors/dashboard/public/, uPlot from node_modules; nothing from a CDN, no build
// step) and the JSON calls of api/doors/dashboard/*-routes.ts. Every answer under /dashboard
// carries a strict Content-Security-Policy (no inline script or style, nothing from other
// origins) and headers that keep it out of frames and other sites' reach.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../core/config/load-config.ts';
import { notFound } from '../../../core/errors.ts';
import type { AccountStore } from '../../../warehouse/account-store.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { Access } from '../../services/access/access.ts';
import { accountRoutes } from './account-routes.ts';
import { dashboardKeyRoutes } from './key-routes.ts';
import { Sessions } from './sessions.ts';
import { ETAG_DIGEST_CHARS } from '../../../core/limits/http.ts';
import { declareRoutes, open, pathOf } from '../../services/access/route-policy.ts';

export interface DashboardOptions {
  config: Config;
  access: Access;
  accounts: AccountStore;
  wh: Warehouse;
}

export const PUBLIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'public');

/** connect-src 'self': the pages call this service only (JSON-RPC, SQL, GraphQL, the stream). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(file: string): Asset {
  const body = readFileSync(file);
  return {
    body,
    type: TYPES[path.extname(file)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, ETAG_DIGEST_CHARS)}"`,
  };
}

/** Every file the dashboard serves, by its path under /dashboard/static/, read once at start:
 *  an allow-list, so no request path ever reaches the file system. */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string, prefix: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name), `${prefix}${e.name}/`);
      else if (TYPES[path.extname(e.name)] !== undefined && e.name !== 'index.html') assets.set(`${prefix}${e.name}`, asset(path.join(dir, e.name)));
    }
  };
  walk(PUBLIC_DIR, '');
  // uPlot's self-contained build and its stylesheet, from the installed package.
  const uplotDir = path.dirname(createRequire(import.meta.url).resolve('uplot'));
  assets.set('vendor/uPlot.iife.min.js', asset(path.join(uplotDir, 'uPlot.iife.min.js')));
  assets.set('vendor/uPlot.min.css', asset(path.join(uplotDir, 'uPlot.min.css')));
  return assets;
}

function send(req: FastifyRequest, reply: FastifyReply, a: Asset): FastifyReply {
  reply.header('etag', a.etag).header('cache-control', 'no-cache').type(a.type);
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  return reply.send(a.body);
}

export async function dashboard(app: FastifyInstance, opts: DashboardOptions): Promise<void> {
  const { config, access, accounts, wh } = opts;
  const assets = loadAssets();
  const index = asset(path.join(PUBLIC_DIR, 'index.html'));
  const sessions = new Sessions(accounts, config.dashboard, access.now);
  // No API key: the pages hold no data, and the JSON calls need a session cookie (account-routes.ts).
  declareRoutes(app, open());

  app.addHook('onSend', async (req, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    // Answers about an account are never cached, by the browser or anything between.
    if (req.url.startsWith('/dashboard/api/')) reply.header('cache-control', 'no-store');
    return payload;
  });

  const page = async (req: FastifyRequest, reply: FastifyReply) => send(req, reply, index);
  app.get('/dashboard', page);
  app.get('/dashboard/', page);
  app.get<{ Params: { '*': string } }>('/dashboard/static/*', async (req, reply) => {
    const a = assets.get(req.params['*']);
    if (a === undefined) throw notFound('no such dashboard file');
    return send(req, reply, a);
  });

  await app.register(accountRoutes, { config, access, accounts, sessions });
  await app.register(dashboardKeyRoutes, { access, sessions, wh });
  app.all('/dashboard/api/*', async () => {
    throw notFound('no such dashboard call');
  });
  // Any other page under /dashboard/ does not exist: its 404 needs no key, as the pages do
  // (a path no route answers elsewhere needs one, route-policy.ts).
  app.get('/dashboard/*', async (req) => {
    throw notFound(`no route for GET ${pathOf(req.url)}`);
  });
}
