// One request sent through each door (JSON-RPC, MCP, REST, GraphQL) and what the door said:
// its error kind's code as that door shows it, and the message. The differential tests
// (test/engine/door-refusals*.test.ts) hold the doors to the same rule with these.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { Errors } from '../../core/errors.ts';
import { startAppWithData } from './services.ts';

/** What a door said: its error kind's code as the door shows it ('answered' when it answered), and the message. */
export interface Refusal {
  code: string | number;
  message: string;
}

/** Each door's code for the invalid-params kind. */
export const CODES = { rpc: Errors.invalidParams.rpc, mcp: Errors.invalidParams.code, rest: Errors.invalidParams.http, graphql: Errors.invalidParams.graphql };
export type Door = keyof typeof CODES;

/** One invalid request per door, and the rule every door's refusal must name. */
export interface Case {
  rule: RegExp;
  doors: Partial<Record<Door, () => Promise<Refusal>>>;
}

/** The four doors of `app`, called with `headers` (a key's). */
export function doorCalls(app: () => FastifyInstance, headers: () => Record<string, string>) {
  return {
    async rpc(method: string, params: unknown[]): Promise<Refusal> {
      const res = await app().inject({ method: 'POST', url: '/v1/rpc', headers: headers(), payload: { jsonrpc: '2.0', id: 1, method, params } });
      const e = (res.json() as { error?: { code: number; data: string } }).error;
      return { code: e?.code ?? 'answered', message: e?.data ?? res.body };
    },
    async mcp(tool: string, args: Record<string, unknown>): Promise<Refusal> {
      const res = await app().inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...headers(), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
      });
      const r = (res.json() as { result?: { isError?: boolean; _meta?: { 'txa/error'?: { code: string } }; content: { text: string }[] } }).result;
      return { code: r?.isError ? (r._meta?.['txa/error']?.code ?? 'no code') : 'answered', message: r?.content[0]?.text ?? res.body };
    },
    async rest(url: string): Promise<Refusal> {
      const res = await app().inject({ method: 'GET', url: `/api/v1${url}`, headers: headers() });
      return { code: res.statusCode, message: (res.json() as { message?: string }).message ?? res.body };
    },
    async graphql(query: string): Promise<Refusal> {
      const res = await app().inject({ method: 'POST', url: '/graphql', headers: { ...headers(), 'content-type': 'application/json' }, payload: { query } });
      const e = (res.json() as { errors?: { message: string; extensions: { code: string } }[] }).errors?.[0];
      return { code: e?.extensions.code ?? 'answered', message: e?.message ?? res.body };
    },
  };
}

type Started = Awaited<ReturnType<typeof startAppWithData>>;

/** An app over `rows` fixture records for a file's tests (started before them, cleaned up after) and its four doors. */
export function appWithDoors(rows: number) {
  let started: Started | undefined;
  beforeAll(async () => {
    started = await startAppWithData(rows);
  });
  afterAll(async () => started?.t.cleanup());
  const at = (): Started => started ?? expect.fail('the app has not started');
  return {
    ...doorCalls(
      () => at().t.app,
      () => at().headers,
    ),
    t: () => at().t,
    headers: () => at().headers,
  };
}

/** Sends each door's request of a case and expects each refusal to be the invalid-params kind naming the case's rule. */
export async function expectSameRule(c: Case): Promise<void> {
  for (const [door, send] of Object.entries(c.doors) as [Door, () => Promise<Refusal>][]) {
    const r = await send();
    expect(r.code, `${door}: ${r.message}`).toBe(CODES[door]);
    expect(r.message, door).toMatch(c.rule);
  }
}
