// GET over app.inject() for REST tests: checks the status (showing the body when it is not
// the expected one) and returns the parsed answer.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/** The REST success envelope (SPEC: `{success, data, meta}`). */
export interface Envelope<T> {
  success: true;
  data: T;
  meta: { count?: number; limit?: number; offset?: number; total?: number } & Record<string, unknown>;
}

export type RestGet = <T>(url: string, status?: number) => Promise<T>;

export function restGet(app: () => FastifyInstance, headers: () => Record<string, string>): RestGet {
  return async <T>(url: string, status = 200): Promise<T> => {
    const res = await app().inject({ method: 'GET', url, headers: headers() });
    expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(status);
    return res.json() as T;
  };
}
