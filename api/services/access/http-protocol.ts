// The HTTP layer below Fastify: the server's time-outs and size limits, and answers to the
// requests Node's HTTP parser refuses before any route or hook sees them (a header block
// over the limit, a malformed request line or header, Content-Length with chunked
// encoding, a body not received in time) or that Node would answer itself (no Host, an
// unknown Expect). Every such answer is `{error, message}` with the title of its status
// (core/errors.ts), `connection: close`, and the address's X-RateLimit-* figures, like
// every other answer (docs/access.md).
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../core/config/load-config.ts';
import { AppError, httpTitle, kindForStatus } from '../../../core/errors.ts';
import {
  HTTP_KEEP_ALIVE_TIMEOUT_MS,
  HTTP_MAX_HEADER_BYTES,
  HTTP_MAX_PATH_PARAM_CHARS,
  HTTP_MAX_PATH_PARAM_UTF16_UNITS,
  HTTP_MAX_URI_BYTES,
  QUOTED_TOKEN_MAX_CHARS,
  REQUEST_LINE_PEEK_BYTES,
} from '../../../core/limits/http.ts';
import type { Logger } from '../../../core/logger.ts';
import { addressFigures, rateLimitHeaders } from './rate-limit-headers.ts';
import type { Access } from './access.ts';
import { checkIntervalOf } from '../../../core/limits/process.ts';

/** Fastify's server options for the time-outs and limits of docs/access.md ("Connections"). */
export function httpServerOptions(config: Config) {
  const { requestTimeoutMs, connectionTimeoutMs } = config.http;
  return {
    // Time to receive a whole request (headers and body), not to answer it.
    requestTimeout: requestTimeoutMs,
    connectionTimeout: connectionTimeoutMs,
    keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // The router counts UTF-16 units; the limit is in code points, as the documents' maxLength
    // counts, and is checked by pathParamTooLong() below (a bound the router never reaches first).
    routerOptions: { maxParamLength: HTTP_MAX_PATH_PARAM_UTF16_UNITS },
    http: {
      requestTimeout: requestTimeoutMs,
      // Node's default (60 s) would outlast a shorter request time-out.
      headersTimeout: requestTimeoutMs,
      // Node looks for requests past their time-out every 30 s by default, which could
      // double the time-out; at most 1 s late is close enough for a cheap walk.
      connectionsCheckingInterval: checkIntervalOf(requestTimeoutMs),
      maxHeaderSize: HTTP_MAX_HEADER_BYTES,
      // Node answers a missing Host itself with an empty 400; checkProtocol() answers it.
      requireHostHeader: false,
    },
  };
}

/** The 414 of a path parameter over HTTP_MAX_PATH_PARAM_CHARS (each path parameter's maxLength in the documents). */
export const PATH_PARAM_TOO_LONG = `a path parameter is longer than the limit of ${HTTP_MAX_PATH_PARAM_CHARS} characters`;

const URI_TOO_LONG = `the request URI is larger than the limit of ${HTTP_MAX_URI_BYTES} bytes; send fewer or shorter parameters`;

/** The bytes the parser overflowed on are a request line that never ended: the URI alone
 *  filled the head limit, so the answer is 414 rather than 431. */
function requestLineOverflow(raw: unknown): boolean {
  return Buffer.isBuffer(raw) && /^[A-Z]+ /.test(raw.subarray(0, REQUEST_LINE_PEEK_BYTES).toString('latin1')) && !raw.includes('\n');
}

/** Status and message for an error of Node's HTTP parser (llhttp codes; `reason` is
 *  llhttp's fixed text, never request bytes) or of its request time-out. */
function parserErrorAnswer(
  err: NodeJS.ErrnoException & { reason?: unknown; rawPacket?: unknown },
  requestTimeoutMs: number,
): { status: number; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (requestLineOverflow(err.rawPacket)) return { status: 414, message: URI_TOO_LONG };
      return {
        status: 431,
        message: `the request line and headers together are larger than the limit of ${HTTP_MAX_HEADER_BYTES} bytes; shorten the URL or the headers`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: `the request was not received in full within ${requestTimeoutMs} ms` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'the chunk extensions of the request body are too large' };
    case 'HPE_INVALID_METHOD':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_URL':
      return { status: 400, message: 'the request line is not "METHOD /path HTTP/1.1"' };
    case 'HPE_INVALID_HEADER_TOKEN':
      return { status: 400, message: 'a header name or value holds a character HTTP does not allow' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, message: `the request body's framing is not valid: ${typeof err.reason === 'string' ? err.reason : err.code}` };
    default:
      return { status: 400, message: `the request is not valid HTTP/1.1${typeof err.reason === 'string' ? `: ${err.reason}` : ''}` };
  }
}

/** Fastify's clientErrorHandler: an `{error, message}` answer written to the socket. */
export function clientErrorHandler(access: Access, config: Config, log: Logger): (err: Error, socket: Socket) => void {
  /** Sockets already answered: the parser may report more errors for the same bytes. */
  const answered = new WeakSet<Socket>();
  return (err, socket) => {
    const e = err as NodeJS.ErrnoException & { reason?: unknown; rawPacket?: unknown };
    if (e.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const { status, message } = parserErrorAnswer(e, config.http.requestTimeoutMs);
    log.debug({ code: e.code, status }, 'request refused by the HTTP parser');
    void addressFigures(access, socket.remoteAddress)
      .then((figures) => {
        // Node's own rule: write only when no answer of a request on this connection has
        // begun (a keep-alive connection's earlier request may be mid-answer), else just close.
        const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
        if (socket.writable && !(inFlight?.headersSent ?? false)) {
          const body = JSON.stringify({ error: httpTitle(status), message });
          const headers = [
            ['content-type', 'application/json; charset=utf-8'],
            ['content-length', String(Buffer.byteLength(body))],
            ['connection', 'close'],
            ...(figures === undefined ? [] : rateLimitHeaders(figures)),
          ];
          socket.write(`HTTP/1.1 ${status} ${httpTitle(status)}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
        }
      })
      .catch((writeErr: unknown) => log.debug({ err: writeErr }, 'could not answer a request refused by the HTTP parser'))
      .finally(() => socket.destroy());
  };
}

// Node's own test for 100-continue, so what Node lets through as one, the hook does too.
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Checks Node leaves to the application here (see requireHostHeader above and the
 * 'checkExpectation' listener), answered through Fastify so they carry the request id
 * and rate-limit headers: a URI over HTTP_MAX_URI_BYTES is 414 (RFC 9110 section 15.5.15),
 * an HTTP/1.1 request without Host is 400 (RFC 9112 section 3.2), an Expect other than
 * 100-continue is 417 (RFC 9110 section 10.1.1), a body in a content coding other than
 * identity is 415 (RFC 9110 section 15.5.16). Install before
 * access control, so such a request is refused as malformed rather than as unauthenticated.
 */
/** A URI over HTTP_MAX_URI_BYTES: its 414, the connection to be closed. Also for errors met
 *  while routing (an over-long path parameter), which skip the hooks. */
export function uriTooLong(req: FastifyRequest, reply: FastifyReply): AppError | undefined {
  if (Buffer.byteLength(req.url, 'latin1') <= HTTP_MAX_URI_BYTES) return undefined;
  reply.header('connection', 'close');
  return new AppError(kindForStatus(414), URI_TOO_LONG);
}

export function installProtocolChecks(app: FastifyInstance): void {
  // Node emits this instead of 'request' for such a request; routing it like any other
  // lets the hook below answer it.
  app.server.on('checkExpectation', (req, res) => app.routing(req, res));
  app.addHook('onRequest', (req: FastifyRequest, reply, done) => {
    try {
      checkRequest(req, reply);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
}

/** The refusal of a malformed request; the connection is closed after it. */
function refuse(reply: FastifyReply, status: number, message: string): AppError {
  reply.header('connection', 'close');
  return new AppError(kindForStatus(status), message);
}

/** Content-Encoding values that leave the body as sent: none, or identity (any case, listed any number of times). */
const IDENTITY_ONLY = /^\s*(?:identity\s*(?:,\s*identity\s*)*)?$/i;

/**
 * A request body in a content coding the service does not decode (gzip, br, deflate…): no
 * route decodes one, so its body would reach a parser as bytes of no known shape (JSON-RPC
 * answered -32700, REST "not valid JSON"). RFC 9110 section 15.5.16: 415, with Accept-Encoding
 * naming the codings accepted (section 12.5.3), here only identity.
 */
function unsupportedCoding(req: FastifyRequest, reply: FastifyReply): AppError | undefined {
  const coding = req.headers['content-encoding'];
  if (coding === undefined || IDENTITY_ONLY.test(coding)) return undefined;
  reply.header('accept-encoding', 'identity');
  return refuse(
    reply,
    415,
    `the request body is sent with Content-Encoding ${JSON.stringify(coding.slice(0, QUOTED_TOKEN_MAX_CHARS))}; this service accepts only identity (an uncoded body): send it without Content-Encoding`,
  );
}

/**
 * A path parameter longer than HTTP_MAX_PATH_PARAM_CHARS code points (JSON Schema's maxLength
 * counts code points, JavaScript's length UTF-16 units: 100 emoji are 200 units and within the
 * limit). A wildcard's rest of the path is not a parameter.
 */
function pathParamTooLong(req: FastifyRequest, reply: FastifyReply): AppError | undefined {
  const params = req.params as Record<string, unknown> | undefined;
  if (params === undefined || params === null) return undefined;
  for (const [name, value] of Object.entries(params)) {
    if (name === '*' || typeof value !== 'string' || value.length <= HTTP_MAX_PATH_PARAM_CHARS) continue;
    let points = 0;
    for (const _ of value) points++;
    if (points > HTTP_MAX_PATH_PARAM_CHARS) return refuse(reply, 414, PATH_PARAM_TOO_LONG);
  }
  return undefined;
}

// Module-level, not a closure per request: every request passes here.
function checkRequest(req: FastifyRequest, reply: FastifyReply): void {
  const long = uriTooLong(req, reply) ?? pathParamTooLong(req, reply);
  if (long !== undefined) throw long;
  const coded = unsupportedCoding(req, reply);
  if (coded !== undefined) throw coded;
  if (req.raw.httpVersion !== '1.1') return;
  if (req.headers.host === undefined || req.headers.host === '') throw refuse(reply, 400, 'an HTTP/1.1 request must carry a Host header');
  const expect = req.headers.expect;
  if (expect !== undefined && !CONTINUE.test(expect)) throw refuse(reply, 417, 'the only expectation this service meets is "Expect: 100-continue"');
}
