// Helpers for JSON-RPC tests: send calls through the real app (app.inject) with the
// API-key headers, and a known data set (demo records plus hand-made ones).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../api/services.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
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

/** 2025-01-01T00:00:00Z: the demo window starts here and spans DEMO_DAYS days. */
export const DEMO_START = 1_735_689_600;
export const DEMO_DAYS = 3;
export const DEMO_END = DEMO_START + DEMO_DAYS * 86_400;

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A deterministic Base58 string of `len` characters from a label. */
export function b58(label: string, len: number): string {
  let h = 2166136261;
  let out = '';
  for (let i = 0; out.length < len; i++) {
    h ^= (label.charCodeAt(i % label.length) + i) & 0xff;
    h = Math.imul(h, 16777619) >>> 0;
    out += B58[h % 58];
  }
  return out;
}

/** Ingest records through the real pipeline; fails the test on any rejection. */
export async function ingest(services: Services, records: readonly (IngestRecord | string)[]): Promise<void> {
  const report = await services.pipeline.ingest(records.map((r, i) => ({ value: typeof r === 'string' ? r : r as object, position: `#${i}` })), 'test');
  if (report.rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(report.rejected.slice(0, 3))}`);
}

/** Ingest `total` demo records (all registry protocols, active or not) over the demo window. */
export async function ingestDemo(services: Services, total = 3000, seed = 7): Promise<void> {
  const ndjson = await demoRecordsNdjson(services.wh, { seed, total, offset: 0, count: total, startTime: DEMO_START, endTime: DEMO_END });
  await ingest(services, ndjson.split('\n').filter((l) => l.trim() !== ''));
}
