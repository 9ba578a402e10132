// The OpenRPC document (https://spec.open-rpc.org) of the JSON-RPC door, derived from the
// catalog: each method with its positional params and result as the schemas the door
// validates and the fuzzer checks against. Answered by the `rpc.discover` method and served
// at GET /v1/openrpc.json (without an API key, like the OpenAPI document: it holds no data).
import { rulesDoc } from '../../../core/request-rules.ts';
import { Errors, type ErrorKind } from '../../../core/errors.ts';
import { RPC_DISCOVER } from '../../catalog/catalog.ts';
import { positionSchemas, type Operation } from '../../catalog/declare.ts';

export { RPC_DISCOVER };

/** The OpenRPC version the document follows. */
const OPENRPC_VERSION = '1.3.2';

export interface OpenRpcDocument {
  openrpc: string;
  info: { title: string; version: string; description: string };
  /** Where the methods are called: the server the document was asked of (withServer). */
  servers?: { name: string; url: string; summary: string }[];
  methods: Record<string, unknown>[];
}

/** The JSON-RPC endpoint's path (SPEC: POST {base_url}/v1/rpc). */
export const RPC_PATH = '/v1/rpc';

/**
 * The document with its server: the endpoint at the origin it was asked of (GET /v1/openrpc.json
 * or rpc.discover), as the OpenAPI document does, so generators and tools built from it call this
 * server. An absolute URL: the meta-schema types a server's url as a URI.
 */
export function withServer(doc: OpenRpcDocument, origin: string): OpenRpcDocument {
  return {
    ...doc,
    servers: [{ name: 'this server', url: `${origin}${RPC_PATH}`, summary: 'The JSON-RPC endpoint of the server this document was fetched from' }],
  };
}

const errorOf = (kind: ErrorKind, when: string) => ({ code: kind.rpc, message: kind.rpcMessage, data: when });

/** Errors every method may answer besides its result (docs/json-rpc.md, "Errors"). */
const METHOD_ERRORS = [
  errorOf(Errors.invalidParams, 'a parameter is missing, unknown or out of range; data names it and the rule'),
  errorOf(Errors.unparsableFilter, 'a filter (filters, blockTime) could not be read: a member has the wrong JSON type'),
];

export function openRpcDocument(catalog: readonly Operation[]): OpenRpcDocument {
  return {
    openrpc: OPENRPC_VERSION,
    info: {
      title: 'Solana DeFi transaction analytics: JSON-RPC 2.0',
      version: '1.0.0',
      description:
        `Read-only analytics over instruction-level transaction records, at POST {base_url}${RPC_PATH} (servers). ` +
        'Params are positional; send the API key in the x-api-key header (or the api-key query parameter).',
    },
    methods: catalog.flatMap((op) => {
      const m = op.rpc;
      if (!m) return [];
      const schemas = positionSchemas(m.params);
      return [
        {
          name: m.method,
          summary: op.summary,
          paramStructure: 'by-position',
          params: m.params.map((p, i) => ({ name: p.name, description: p.description, required: p.required, schema: schemas[i] })),
          result: { name: 'result', schema: m.result },
          errors: METHOD_ERRORS,
          // Extensions: what else the catalog says of the operation.
          // The method's own (its ranges in order) and, for a declared request, the request's.
          ...rulesDoc([...m.rules, ...(m.ownShape ? [] : (op.request?.rules ?? []))]),
          'x-cost': op.cost,
          'x-analytics-preset': op.preset,
          ...(op.rest ? { 'x-rest': `GET /api/v1${op.rest.url}` } : {}),
          ...(op.graphql ? { 'x-graphql': op.graphql.field } : {}),
        },
      ];
    }),
  };
}
