// The JSON body parser of every route that takes application/json: Fastify's own
// (secure-json-parse, refusing the keys that could change an object's prototype), with a
// refusal that says what it refused. Fastify answers such a body "not valid JSON" although it
// is valid JSON: a client sending `"__proto__"` inside an MCP tool's arguments was told its
// JSON was broken. JSON-RPC reads its bodies itself (api/doors/rpc/rpc-routes.ts), as do the operator's
// ingest routes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import { JSON_KEY_PATH_MAX_CHARS } from '../../../core/limits/http.ts';

/** A body that is valid JSON but holds a key refused for prototype safety. */
export class ForbiddenJsonKey extends AppError {
  constructor(
    readonly key: string,
    readonly at: string,
  ) {
    super(
      Errors.invalidRequest,
      `the request body holds the key ${JSON.stringify(key)} (at ${at}); keys that could change an object's prototype ` +
        '("__proto__", and "constructor" holding "prototype") are refused in every JSON body, however deep: rename the key',
    );
  }
}

const PATH_MAX_CHARS = JSON_KEY_PATH_MAX_CHARS;

/** Where a parsed value holds a refused key: its path and the key, or undefined. Iterative: a body may nest deeper than the stack. */
export function forbiddenKeyIn(value: unknown): { key: string; at: string } | undefined {
  const stack: { v: unknown; at: string }[] = [{ v: value, at: '' }];
  while (stack.length > 0) {
    const { v, at } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x]) : Object.entries(v);
    for (const [k, x] of entries) {
      const here = Array.isArray(v) ? `${at}${k}` : `${at}${at === '' ? '' : '.'}${k}`;
      const prototypeOf = k === 'constructor' && typeof x === 'object' && x !== null && Object.hasOwn(x, 'prototype');
      if (!Array.isArray(v) && (k === '__proto__' || prototypeOf))
        return { key: k, at: here.length > PATH_MAX_CHARS ? `…${here.slice(-PATH_MAX_CHARS)}` : here };
      stack.push({ v: x, at: here.length > 2 * PATH_MAX_CHARS ? here.slice(-PATH_MAX_CHARS) : here });
    }
  }
  return undefined;
}

/** Replace the root's application/json parser (before any route is registered: plugins inherit it). */
export function installJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(app));
}

type Parsed = (err: Error | null, value?: unknown) => void;

/**
 * The application/json parser every route has. `read`: a door that also needs the body's text
 * (MCP's scan for numbers JSON.parse rounds, api/services/positional/raw-numbers.ts) is handed it
 * with the request once the body is accepted; its own context installs this parser with it.
 */
export function jsonBodyParser(app: FastifyInstance, read?: (req: FastifyRequest, text: string) => void) {
  const strict = app.getDefaultJsonParser('error', 'error');
  return (req: FastifyRequest, body: string | Buffer, done: Parsed): void => {
    strict(req, body as string, (err: Error | null, value?: unknown) => {
      if (err === null || err === undefined) {
        read?.(req, body as string);
        return done(null, value);
      }
      // Only a refusal costs the second parse: a body JSON.parse reads was refused for a key.
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(body).replace(/^\uFEFF/, ''));
      } catch {
        return done(err, undefined);
      }
      const found = forbiddenKeyIn(parsed);
      done(found === undefined ? err : new ForbiddenJsonKey(found.key, found.at), undefined);
    });
  };
}
