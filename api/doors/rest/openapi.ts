// The OpenAPI 3 document, generated from the route schemas of the REST and SQL interfaces
// (only routes tagged REST or SQL are listed), at /api/v1/openapi.json, and an interactive
// page at /api/v1/docs. Must be set up before those routes are registered. The answers every
// operation can get (414, 429 with Retry-After, 401/403 …) and 405 with Allow are added to
// the route schemas' own, and day parameters say they are sent as the day (openapi-answers.ts);
// protocol names are the registry's, read per request, so the document lists the names the
// server accepts now.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { declareRoutes, open } from '../../services/access/route-policy.ts';
import { errorBody } from './rest-schemas.ts';
import { withCommonAnswers, withDayParameters, withNamedEnums, withProtocolNames } from './openapi-answers.ts';

export interface OpenApiOptions {
  /** The active protocol names (the registry's), which protocol_name and filters.protocols take. */
  protocols(): Promise<readonly string[]>;
}

export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): Promise<void> {
  app.addSchema(errorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Solana DeFi transaction analytics: REST and SQL',
        version: '1.0.0',
        description:
          'Read-only analytics over instruction-level transaction records. Successful REST answers are ' +
          '{success: true, data, meta}; errors are {error, message}. Dates are YYYY-MM-DD, inclusive, UTC. ' +
          'Send the API key in the x-api-key header (or the api-key query parameter). Every answer carries ' +
          'X-RateLimit-Limit, -Remaining, -Reset and -Plan; a 429 carries Retry-After (seconds). A method a path ' +
          'does not answer gets 405 with Allow (components/responses/MethodNotAllowed); a path nobody answers, 404.',
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
    transformObject: (doc) => withDayParameters(withCommonAnswers('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject)),
    // Shared schemas appear under their $id (ErrorBody) rather than def-0, def-1 …
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  // The page and its files need no key (they hold no data): declared for the plugin's routes.
  await app.register(async (docs) => {
    declareRoutes(docs, open('rest'));
    await docs.register(swaggerUi, { routePrefix: '/api/v1/docs' });
  });
  // servers: the address the document was fetched from, so generators and clients built from
  // it call this server (a relative '/' would leave them without a base URL).
  app.get('/api/v1/openapi.json', { schema: { hide: true }, config: open('rest') }, async (req) => ({
    ...withNamedEnums(withProtocolNames(app.swagger() as unknown as Record<string, unknown>, await opts.protocols())),
    servers: [{ url: `${req.protocol}://${req.host}`, description: 'this server' }],
  }));
}
