// Test-only operations declared once by their request (api/catalog/declared.ts), offered on
// every door: declared-operation.test.ts shows one appears and works everywhere; the hostile
// corpus (hostile-corpus.test.ts) reaches the one check (core/request-check.ts) through them
// with no door's own validation in front (GraphQL's derived field, REST's derived route).
import { Type } from '@sinclair/typebox';
import { withDefault } from '../../api/catalog/declare.ts';
import { declared } from '../../api/catalog/declared.ts';
import { blockTime, list, ProtocolName } from '../../api/catalog/params.ts';
import { request } from '../../core/request-check.ts';
import { sumAtMost } from '../../core/request-rules.ts';

/** A sample of the asked protocols (every visible one when none is asked), with the length of the range asked. */
export const protocolSample = declared({
  name: 'protocolSample',
  summary: 'A sample of the asked protocols (a test operation)',
  request: request(
    Type.Object(
      {
        protocols: Type.Optional(list(ProtocolName, 5, 'Protocols')),
        range: blockTime,
        limit: withDefault(Type.Integer({ minimum: 1, maximum: 3, description: 'How many' }), 2),
        offset: withDefault(Type.Integer({ minimum: 0, maximum: 9, description: 'How many to skip' }), 0),
      },
      { additionalProperties: false },
    ),
    'list',
    [sumAtMost('offset', 'limit', 10, 'ask for fewer')],
  ),
  result: Type.Object({ protocols: Type.Array(Type.String()), seconds: Type.Integer() }, { additionalProperties: false }),
  doors: { rpc: 'getProtocolSample', rest: '/analytics/protocol-sample', graphql: 'protocolSample' },
  answer: async (_a, c) => ({
    protocols: c.protocols.slice(c.offset ?? 0, (c.offset ?? 0) + (c.limit ?? 2)),
    seconds: c.range.gte === undefined || c.range.lte === undefined ? 0 : c.range.lte - c.range.gte + 1,
  }),
});

/** The same, for one protocol (protocol scope `one`): absent, every visible one together. */
export const oneProtocolSample = declared({
  name: 'oneProtocolSample',
  summary: 'The protocols one request reads when it names at most one (a test operation)',
  request: request(Type.Object({ protocol: Type.Optional(ProtocolName), range: blockTime }, { additionalProperties: false }), 'one'),
  result: Type.Object({ protocols: Type.Array(Type.String()) }, { additionalProperties: false }),
  doors: { rpc: 'getOneProtocolSample', rest: '/analytics/one-protocol-sample', graphql: 'oneProtocolSample' },
  answer: async (_a, c) => ({ protocols: c.protocols }),
});
