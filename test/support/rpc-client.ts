// The JSON-RPC test client: calls through the real app (app.inject) with the API-key
// headers. Data sets are in fixtures.ts, reference figures in oracle.ts.
import type { FastifyInstance } from 'fastify';
import { apiKeyHeaders } from './api-key.ts';

export interface RpcError {
  code: number;
  message: string;
  data: string;
}

export interface RpcAnswer<T = unknown> {
  jsonrpc: string;
  id: string | number | null;
  result?: T;
  error?: RpcError;
}

export interface RawReply {
  status: number;
  body: string;
  json: unknown;
}

export class RpcClient {
  private nextId = 1;

  private constructor(
    readonly app: FastifyInstance,
    readonly headers: Record<string, string>,
  ) {}

  static async create(app: FastifyInstance): Promise<RpcClient> {
    return new RpcClient(app, await apiKeyHeaders(app));
  }

  /** POST any body (object or raw text) to /v1/rpc. */
  async raw(payload: unknown, contentType = 'application/json'): Promise<RawReply> {
    const res = await this.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { ...this.headers, 'content-type': contentType },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.statusCode, body: res.body, json: res.body === '' ? undefined : JSON.parse(res.body) };
  }

  /** One call; returns the whole answer after checking HTTP 200 and the envelope. */
  async answer<T = unknown>(method: string, params?: unknown[]): Promise<RpcAnswer<T>> {
    const id = this.nextId++;
    const reply = await this.raw({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    if (reply.status !== 200) throw new Error(`HTTP ${reply.status}: ${reply.body}`);
    const a = reply.json as RpcAnswer<T>;
    if (a.jsonrpc !== '2.0' || a.id !== id) throw new Error(`bad envelope: ${reply.body}`);
    return a;
  }

  /** One call that must succeed; returns its result. */
  async call<T = unknown>(method: string, params?: unknown[]): Promise<T> {
    const a = await this.answer<T>(method, params);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)}`);
    return a.result as T;
  }

  /** One call that must fail; returns its error object. */
  async error(method: string, params?: unknown[]): Promise<RpcError> {
    const a = await this.answer(method, params);
    if (!a.error) throw new Error(`${method} unexpectedly succeeded: ${JSON.stringify(a.result).slice(0, 200)}`);
    return a.error;
  }
}
