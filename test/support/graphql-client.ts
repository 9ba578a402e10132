// POST /graphql over app.inject() for GraphQL tests: the parsed answer with its status and headers.
import type { FastifyInstance } from 'fastify';

export interface GraphqlAnswer<T = Record<string, any>> {
  data?: T;
  errors?: { message: string; path?: (string | number)[]; extensions: { code: string } }[];
  extensions: { cost: { requested: number; budget: number } } & Record<string, unknown>;
}

export interface GraphqlReply<T> {
  status: number;
  headers: Record<string, unknown>;
  body: GraphqlAnswer<T>;
  text: string;
}

export type Gql = <T = Record<string, any>>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>) => Promise<GraphqlReply<T>>;

export function graphqlClient(app: () => FastifyInstance, keyHeaders: () => Record<string, string>): Gql {
  return async <T>(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await app().inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...keyHeaders(), 'content-type': 'application/json', ...headers },
      payload: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
    });
    return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) as GraphqlAnswer<T>, text: res.body };
  };
}

/** The data of an answer that must have no errors. */
export async function dataOf<T = Record<string, any>>(reply: Promise<GraphqlReply<T>>): Promise<T> {
  const r = await reply;
  if (r.status !== 200 || r.body.errors !== undefined || r.body.data === undefined) throw new Error(`GraphQL answer ${r.status}: ${r.text.slice(0, 500)}`);
  return r.body.data;
}
