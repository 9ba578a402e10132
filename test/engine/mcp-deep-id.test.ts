// An MCP message whose id is an object nested thousands of levels deep: refused as the
// JSON-RPC message it is not (400), never a 500. The door's budget set aside room for each
// request's id by JSON.stringify(id), which overflowed the stack past a few thousand levels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
});
afterAll(async () => t.cleanup());

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

describe('an MCP id nested too deep', () => {
  it.each([
    ['one message', (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`],
    ['a batch', (id: string) => `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":${id},"method":"tools/list"}]`],
  ])('in %s is a 400 JSON-RPC error, not a 500', async (_what, body) => {
    const id = `${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}`;
    const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, ...MCP_HEADERS }, payload: body(id) });
    expect(res.statusCode, res.body).toBe(400);
    expect((res.json() as { error: { code: number } }).error.code).toBe(-32700);
  });
});
