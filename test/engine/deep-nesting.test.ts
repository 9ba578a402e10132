// Values nested thousands of levels deep where a door read them with something recursive:
// refused as bad requests, never a 500. GraphQL variables, used or not, were a 500: the
// answer cache's key is JSON.stringify(variables), which overflows the stack past a few
// thousand levels. An MCP message whose id was so deep was a 500 too: the door set aside
// answer room for each request's id by JSON.stringify(id), before the transport refused it.
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

const deep = (levels: number, open: string, close: string, leaf = '1') => `${open.repeat(levels)}${leaf}${close.repeat(levels)}`;

describe('GraphQL variables nested too deep', () => {
  it.each([
    ['an unused variable of nested objects', '{ protocols }', `{"a":${deep(6000, '{"a":', '}')}}`],
    [
      'a filter of nested lists',
      'query($f: TransactionFilters) { protocolStats(filters: $f) { protocolName } }',
      `{"f":{"protocols":${deep(6000, '[', ']')}}}`,
    ],
  ])('%s is a 400 naming the limit, never a 500', async (_what, query, variables) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      payload: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
    });
    expect(res.statusCode, res.body).toBe(400);
    const error = (res.json() as { errors: { message: string; extensions: { code: string } }[] }).errors[0]!;
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(error.message).toBe('variables are nested more than 32 levels deep (lists and objects); no argument takes anything that deep');
  });

  it('still takes variables of an ordinary depth', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: {
        query: 'query($f: TransactionFilters) { protocolStats(filters: $f) { protocolName } }',
        variables: { f: { dateRange: { start: '2024-12-30' } } },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { errors?: unknown }).errors).toBeUndefined();
  });
});

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
