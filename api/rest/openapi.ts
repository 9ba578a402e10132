// The OpenAPI 3 document, generated from the route schemas of the REST and SQL interfaces
// (only routes tagged REST or SQL are listed), at /api/v1/openapi.json, and an interactive
// page at /api/v1/docs. Must be set up before those routes are registered.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../catalog/rest-schemas.ts';

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(errorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Solana DeFi transaction analytics: REST and SQL',
        version: '1.0.0',
        description: 'Read-only analytics over instruction-level transaction records. Successful REST answers are ' +
          '{success: true, data, meta}; errors are {error, message}. Dates are YYYY-MM-DD, inclusive, UTC. ' +
          'Send the API key in the x-api-key header (or the api-key query parameter).',
      },
      tags: [
        { name: 'REST', description: 'REST interface, base /api/v1' },
        { name: 'SQL', description: 'Read-only SQL over the published tables' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api-key' },
        },
      },
      security: [{ apiKey: [] }, { apiKeyQuery: [] }],
    },
    hideUntagged: true,
    // Shared schemas appear under their $id (ErrorBody) rather than def-0, def-1 …
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/v1/docs' });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
