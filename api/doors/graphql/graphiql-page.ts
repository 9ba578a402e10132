// GraphiQL's page and assets for GET /graphql from a browser (no CDN, no inline script).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply } from 'fastify';

// ---- GraphiQL -----------------------------------------------------------------------------

const ASSETS = path.join(import.meta.dirname, 'graphiql');
const require = createRequire(import.meta.url);
/** A file of an installed package (its folder found through package.json, which every package exports). */
const packageFile = (pkg: string, file: string): string => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
/** GraphiQL and React, as their packages ship them (no CDN): name in the URL -> file. */
const PACKAGE_ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  'graphiql.min.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript; charset=utf-8' },
  'graphiql.min.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css; charset=utf-8' },
  'react.production.min.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript; charset=utf-8' },
};

/**
 * GraphiQL's page, our start-up script and style, and the packages' files: no CDN, no inline
 * script. The Content-Security-Policy allows only this origin's scripts and requests;
 * styles may be inline (GraphiQL's editor sets them) and fonts are GraphiQL's embedded ones.
 */
export function graphiqlAssets() {
  const html = readFileSync(path.join(ASSETS, 'index.html'), 'utf8');
  const js = readFileSync(path.join(ASSETS, 'graphiql.js'), 'utf8');
  const css = readFileSync(path.join(ASSETS, 'graphiql.css'), 'utf8');
  const packaged = new Map(Object.entries(PACKAGE_ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file), type: a.type }]));
  const csp =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  const common = (reply: FastifyReply, type: string): FastifyReply =>
    reply
      .header('content-type', type)
      .header('content-security-policy', csp)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache');
  return {
    send: (reply: FastifyReply) => common(reply, 'text/html; charset=utf-8').send(html),
    script: (reply: FastifyReply) => common(reply, 'text/javascript; charset=utf-8').send(js),
    style: (reply: FastifyReply) => common(reply, 'text/css; charset=utf-8').send(css),
    /** A packaged file by name, or undefined for any other name (an allow-list, never a path). */
    packaged: (name: string, reply: FastifyReply) => {
      const a = packaged.get(name);
      return a === undefined ? undefined : common(reply, a.type).header('cache-control', 'public, max-age=86400').send(a.body);
    },
  };
}
