// The same invalid request sent through every door (JSON-RPC, MCP, REST, GraphQL) is refused
// by the same rule: the same error kind (ERR_INVALID_PARAMS: -32602, the MCP tool error's
// code, 400, BAD_USER_INPUT) and a message naming the same rule in the door's own words.
// A door that checked on its own would drift from the others; this holds them together.
import { describe, expect, it } from 'vitest';
import { REST_OFFSET_WINDOW } from '../../core/limits/questions.ts';
import { dayStart } from '../support/fixtures.ts';
import { appWithDoors, CODES, expectSameRule, type Case, type Door, type Refusal } from '../support/door-calls.ts';

const { rpc, mcp, rest, graphql, t } = appWithDoors(500);

const gte = dayStart(3);
const lte = dayStart(1);
const LONG = { gte: Date.UTC(2000, 0, 1) / 1000, lte: Date.UTC(2024, 11, 31, 23, 59, 59) / 1000 };

const CASES: Record<string, Case> = {
  'a range whose start is after its end (ordered)': {
    rule: /(is after|must not be later than)/,
    doors: {
      rpc: () => rpc('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: { gte, lte } }]),
      mcp: () => mcp('getProtocolStats', { options: { protocolName: 'jupiter_v6', blockTime: { gte, lte } } }),
      rest: () => rest('/analytics/protocols?protocol_name=jupiter_v6&date_from=2024-12-31&date_to=2024-12-30'),
      graphql: () => graphql('{ protocolStats(filters: { dateRange: { start: "2024-12-31", end: "2024-12-30" } }) { protocolName } }'),
    },
  },
  'an unknown protocol (protocol scope)': {
    rule: /unknown protocol "no_such_protocol"/,
    doors: {
      rpc: () => rpc('getProtocolStats', [{ protocolName: 'no_such_protocol' }]),
      mcp: () => mcp('getProtocolStats', { options: { protocolName: 'no_such_protocol' } }),
      rest: () => rest('/analytics/protocols?protocol_name=no_such_protocol'),
      graphql: () => graphql('{ protocolStats(filters: { protocols: ["no_such_protocol"] }) { protocolName } }'),
    },
  },
  'an unknown protocol in a listing filter (protocol scope)': {
    rule: /unknown protocol "no_such_protocol"/,
    doors: {
      rpc: () => rpc('getTransactions', [{ filters: { protocols: ['no_such_protocol'] } }]),
      mcp: () => mcp('getTransactions', { options: { filters: { protocols: ['no_such_protocol'] } } }),
      graphql: () => graphql('{ timeSeries(filters: { protocols: ["no_such_protocol"], dateRange: { start: "2024-12-30", end: "2024-12-31" } }) { value } }'),
    },
  },
  'too many buckets (spanAtMost)': {
    rule: /the range spans \d+ hour buckets; at most 10000/,
    doors: {
      rpc: () => rpc('getProtocolActivity', [{ blockTime: LONG, interval: 'hour' }]),
      mcp: () => mcp('getProtocolActivity', { options: { blockTime: LONG, interval: 'hour' } }),
      rest: () => rest('/analytics/time-series?date_from=2000-01-01&date_to=2024-12-31&granularity=hour'),
      graphql: () => graphql('{ timeSeries(filters: { dateRange: { start: "2000-01-01", end: "2024-12-31" } }, bucketBy: HOUR) { value } }'),
    },
  },
  "a page past the listing window (sumAtMost, and each door's page maximum)": {
    rule: new RegExp(`(offset \\+ limit must be at most ${REST_OFFSET_WINDOW}|limit must be at most 10000|pagination.first must be between 1 and)`),
    doors: {
      rpc: () => rpc('getTransactions', [{ limit: 10_001 }]),
      mcp: () => mcp('getTransactions', { options: { limit: 10_001 } }),
      rest: () => rest(`/transactions?offset=${REST_OFFSET_WINDOW - 50}&limit=100`),
      graphql: () => graphql('{ transactions(pagination: { first: 100000 }) { pageInfo { hasNextPage } } }'),
    },
  },
};

describe('every door refuses the same invalid request by the same rule', () => {
  it.each(Object.entries(CASES))('%s', async (_name, c) => {
    await expectSameRule(c);
  });

  it('an inactive protocol is refused as an unknown one, on every door', async () => {
    await t().services.registry.setActive('whirlpool', false);
    t().services.analytics.invalidate();
    try {
      const refusals: [Door, Refusal][] = [
        ['rpc', await rpc('getProtocolStats', [{ protocolName: 'whirlpool' }])],
        ['mcp', await mcp('getProtocolStats', { options: { protocolName: 'whirlpool' } })],
        ['rest', await rest('/analytics/protocols?protocol_name=whirlpool')],
        ['graphql', await graphql('{ protocolStats(filters: { protocols: ["whirlpool"] }) { protocolName } }')],
      ];
      for (const [door, r] of refusals) {
        expect(r.code, `${door}: ${r.message}`).toBe(CODES[door]);
        expect(r.message, door).toMatch(/unknown protocol "whirlpool"/);
      }
    } finally {
      await t().services.registry.setActive('whirlpool', true);
      t().services.analytics.invalidate();
    }
  });
});
