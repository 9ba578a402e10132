// The documents as a client generator reads them (OpenAPI for REST, SQL and exports; OpenRPC for
// JSON-RPC): every limit the server holds a parameter to is declared (path parameters' maxLength
// is the router's limit, held in characters as JSON Schema counts them), every 64-bit quantity
// says int64 and every fraction double, every enum is one named component, every operation has a
// stable readable operationId, a repeatable query parameter is an array sent form-exploded, and
// the OpenRPC document names its server. test/openapi-go-client.test.ts builds a Go client from
// the same document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PATH_PARAM_TOO_LONG } from '../api/access/http-protocol.ts';
import { HTTP_MAX_PATH_PARAM_CHARS } from '../core/limits.ts';
import { apiKeyHeaders } from './support/api-key.ts';
import { longestString, resolved } from './support/openapi-walk.ts';
import { startApp } from './support/services.ts';

type Json = Record<string, unknown>;
interface Parameter { name: string; in: string; schema: Json; style?: string; explode?: boolean }
interface Operation { operationId?: string; parameters?: Parameter[] }

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let openApi: Json & { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  openApi = (await t.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'api.example.test:8080' } })).json();
});
afterAll(async () => t?.cleanup());

const operations = () => Object.entries(openApi.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, op })));

describe('operations and parameters', () => {
  it('every path parameter declares the router\'s limit as its maxLength, and every string parameter is bounded', () => {
    for (const { name, path, op } of operations()) {
      const inPath = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect(inPath.map((p) => p.name).sort(), name).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      for (const p of inPath) expect(p.schema.maxLength, `${name} ${p.name}`).toBe(HTTP_MAX_PATH_PARAM_CHARS);
      for (const p of op.parameters ?? []) {
        const s = resolved(openApi, p.schema);
        const value = s.type === 'array' ? resolved(openApi, s.items as Json) : s;
        if (value.type === 'string') expect(longestString(value), `${name} ${p.in} ${p.name}`).toBeLessThan(Number.POSITIVE_INFINITY);
      }
    }
  });

  it('holds a path parameter to that many characters as JSON Schema counts them (code points): 414 past it', async () => {
    const get = (id: string) => t.app.inject({ url: `/v1/exports/${encodeURIComponent(id)}`, headers });
    const emoji = '\u{1F600}';
    // 100 characters of two UTF-16 units each: within the declared maxLength, so routed (an unknown job: 404).
    expect((await get(emoji.repeat(HTTP_MAX_PATH_PARAM_CHARS))).statusCode).toBe(404);
    expect((await get('a'.repeat(HTTP_MAX_PATH_PARAM_CHARS))).statusCode).toBe(404);
    for (const id of ['a'.repeat(HTTP_MAX_PATH_PARAM_CHARS + 1), emoji.repeat(HTTP_MAX_PATH_PARAM_CHARS + 1)]) {
      const res = await get(id);
      expect(res.statusCode, `${id.length} units`).toBe(414);
      expect(res.json()).toEqual({ error: 'URI Too Long', message: PATH_PARAM_TOO_LONG });
    }
  });
});
