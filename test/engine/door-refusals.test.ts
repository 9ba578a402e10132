// The same invalid request sent through every door (JSON-RPC, MCP, REST, GraphQL) is refused
// by the same rule: the same error kind (ERR_INVALID_PARAMS: -32602, the MCP tool error's
// code, 400, BAD_USER_INPUT) and a message naming the same rule in the door's own words.
// A door that checked on its own would drift from the others; this holds them together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../core/errors.ts';
import { REST_OFFSET_WINDOW } from '../../core/limits.ts';
import { dayStart } from '../support/fixtures.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;

beforeAll(async () => {
  ({ t, headers } = await startAppWithData(500));
});
afterAll(async () => t.cleanup());

/** What a door said: its error kind's code as the door shows it, and the message. */
interface Refusal {
  code: string | number;
  message: string;
}

async function rpc(method: string, params: unknown[]): Promise<Refusal> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method, params } });
  const e = (res.json() as { error?: { code: number; data: string } }).error;
  return { code: e?.code ?? 'answered', message: e?.data ?? res.body };
}

async function mcp(tool: string, args: Record<string, unknown>): Promise<Refusal> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
  });
  const r = (res.json() as { result?: { isError?: boolean; _meta?: { 'txa/error'?: { code: string } }; content: { text: string }[] } }).result;
  return { code: r?.isError ? (r._meta?.['txa/error']?.code ?? 'no code') : 'answered', message: r?.content[0]?.text ?? res.body };
}

async function rest(url: string): Promise<Refusal> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers });
  return { code: res.statusCode, message: (res.json() as { message?: string }).message ?? res.body };
}

async function graphql(query: string): Promise<Refusal> {
  const res = await t.app.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, payload: { query } });
  const e = (res.json() as { errors?: { message: string; extensions: { code: string } }[] }).errors?.[0];
  return { code: e?.extensions.code ?? 'answered', message: e?.message ?? res.body };
}

/** Each door's code for the invalid-params kind. */
const CODES = { rpc: Errors.invalidParams.rpc, mcp: Errors.invalidParams.code, rest: Errors.invalidParams.http, graphql: Errors.invalidParams.graphql };
type Door = keyof typeof CODES;

/** One invalid request per door, and the rule every door's refusal must name. */
interface Case {
  rule: RegExp;
  doors: Partial<Record<Door, () => Promise<Refusal>>>;
}

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
    for (const [door, send] of Object.entries(c.doors) as [Door, () => Promise<Refusal>][]) {
      const r = await send();
      expect(r.code, `${door}: ${r.message}`).toBe(CODES[door]);
      expect(r.message, door).toMatch(c.rule);
    }
  });

  it('an inactive protocol is refused as an unknown one, on every door', async () => {
    await t.services.registry.setActive('whirlpool', false);
    t.services.analytics.invalidate();
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
      await t.services.registry.setActive('whirlpool', true);
      t.services.analytics.invalidate();
    }
  });
});
