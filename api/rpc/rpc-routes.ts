// POST /v1/rpc: the HTTP side of JSON-RPC. Every JSON-RPC answer is HTTP 200, a parse
// failure included (DESIGN section 4); a body that yields no answer (notifications only)
// is 204 No Content. Authentication and rate limiting, which may answer 401/403/429, are
// hooks outside this plugin; errors from them are passed on to the app's handler.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Analytics } from '../analytics/analytics.ts';
import { handleBody, PARSE_FAILED, type RpcResponse } from './json-rpc.ts';
import { invalidRequest } from './rpc-errors.ts';
import { RpcMethods } from './rpc-methods.ts';

export interface RpcRouteOptions {
  analytics: Analytics;
}

export async function rpcRoutes(app: FastifyInstance, opts: RpcRouteOptions): Promise<void> {
  const methods = new RpcMethods(opts.analytics);

  // Within this plugin only: read any content type as text and parse it here, so invalid
  // JSON becomes a JSON-RPC parse error (-32700) rather than Fastify's HTTP 400. The parsed
  // value (an array for a batch) is what request.body holds, for hooks that count calls.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(null, PARSE_FAILED);
    }
  });

  // Body-level failures (too large, unreadable) still get a JSON-RPC answer; anything else
  // (authentication, rate limits) goes on to the app's error handler by being rethrown.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (typeof err.code === 'string' && err.code.startsWith('FST_ERR_CTP_')) {
      const data = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? `the request body is larger than the ${app.initialConfig.bodyLimit ?? 1_048_576}-byte limit`
        : 'the request body could not be read';
      const answer: RpcResponse = { jsonrpc: '2.0', id: null, error: invalidRequest(data) };
      return reply.code(200).send(answer);
    }
    throw err;
  });

  app.post('/v1/rpc', async (req, reply) => {
    // No body at all (no content type, nothing sent) is not valid JSON either.
    const body = req.body === undefined ? PARSE_FAILED : req.body;
    const answer = await handleBody(body, methods, {
      reference: req.id,
      onInternalError: (err, reference) => req.log.error({ err, reference }, 'JSON-RPC call failed'),
    });
    if (answer === undefined) return reply.code(204).send();
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer));
  });
}
