// An app with demo data and a key for GraphQL tests, plus further apps on the same services
// with other GraphQL settings (lower budgets, smaller limits), all closed after the file.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../../api/server/app.ts';
import { graphqlClient } from './graphql-client.ts';
import { startAppWithData } from './services.ts';

type Started = Awaited<ReturnType<typeof startAppWithData>>['t'];
type GraphqlSettings = Parameters<typeof buildApp>[0]['graphql'];

/** Answers in GraphQL-over-HTTP's strict media type (request errors are 400 there). */
export const STRICT = { accept: 'application/graphql-response+json' };

/** Register the file's set-up: `records` demo records, an enterprise key, clean-up after. */
export function graphqlFixture(records: number) {
  const state: { t?: Started; headers: Record<string, string> } = { headers: {} };
  const extraApps: FastifyInstance[] = [];
  beforeAll(async () => {
    const started = await startAppWithData(records);
    state.t = started.t;
    state.headers = started.headers;
  });
  afterAll(async () => {
    for (const a of extraApps) await a.close();
    await state.t?.cleanup();
  });
  const t = (): Started => state.t!;
  return {
    t,
    headers: () => state.headers,
    gql: graphqlClient(
      () => t().app,
      () => state.headers,
    ),
    /** A second app on the same services (same keys and data) with other GraphQL settings. */
    async appWith(graphql: GraphqlSettings): Promise<FastifyInstance> {
      const app = await buildApp({ ...t().services, graphql });
      extraApps.push(app);
      return app;
    },
  };
}
