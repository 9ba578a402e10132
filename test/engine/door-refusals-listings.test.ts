// The differential test of door-refusals.test.ts for the operations declared last: the two
// listings (getTransactions with REST /transactions and GraphQL transactions,
// getTransactionsForAddress) and the fee statistics (REST /analytics/fees, whose GraphQL peer
// is transactions with fee metrics). The same invalid request through every door that
// offers it is refused by the same rule, in each door's words.
import { describe, it } from 'vitest';
import { FILTER_LISTS } from '../../core/vocabulary/primitives.ts';
import { appWithDoors, expectSameRule, type Case } from '../support/door-calls.ts';
import { dayStart } from '../support/fixtures.ts';

const { rpc, mcp, rest, graphql } = appWithDoors(500);

const ADDRESS = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const backwards = { gte: dayStart(3), lte: dayStart(1) };
const REVERSED_DAYS = 'date_from=2024-12-31&date_to=2024-12-30';
const REVERSED_RANGE = 'dateRange: { start: "2024-12-31", end: "2024-12-30" }';
const tooMany = Array.from({ length: FILTER_LISTS.protocols.max + 1 }, () => 'jupiter_v6');

const CASES: Record<string, Case> = {
  'a listing range whose start is after its end (ordered)': {
    rule: /(is after|must not be later than)/,
    doors: {
      rpc: () => rpc('getTransactions', [{ filters: { blockTime: backwards } }]),
      mcp: () => mcp('getTransactions', { options: { filters: { blockTime: backwards } } }),
      rest: () => rest(`/transactions?${REVERSED_DAYS}`),
      graphql: () => graphql(`{ transactions(filters: { ${REVERSED_RANGE} }) { pageInfo { hasNextPage } } }`),
    },
  },
  'an address listing range whose start is after its end (ordered)': {
    rule: /must not be later than/,
    doors: {
      rpc: () => rpc('getTransactionsForAddress', [ADDRESS, { filters: { blockTime: backwards } }]),
      mcp: () => mcp('getTransactionsForAddress', { address: ADDRESS, options: { filters: { blockTime: backwards } } }),
    },
  },
  'an unknown protocol in a transactions listing (protocol scope)': {
    rule: /unknown protocol "no_such_protocol"/,
    doors: {
      rpc: () => rpc('getTransactions', [{ filters: { protocols: ['jupiter_v6', 'no_such_protocol'] } }]),
      mcp: () => mcp('getTransactions', { options: { filters: { protocols: ['jupiter_v6', 'no_such_protocol'] } } }),
      rest: () => rest('/transactions?protocol_name=no_such_protocol'),
      graphql: () => graphql('{ transactions(filters: { protocols: ["jupiter_v6", "no_such_protocol"] }) { pageInfo { hasNextPage } } }'),
    },
  },
  'an unknown protocol in an address listing (protocol scope)': {
    rule: /unknown protocol "no_such_protocol"/,
    doors: {
      rpc: () => rpc('getTransactionsForAddress', [ADDRESS, { filters: { protocols: ['no_such_protocol'] } }]),
      mcp: () => mcp('getTransactionsForAddress', { address: ADDRESS, options: { filters: { protocols: ['no_such_protocol'] } } }),
    },
  },
  'more protocols than a filter holds (the shared list cap)': {
    rule: new RegExp(`at most ${FILTER_LISTS.protocols.max}`),
    doors: {
      rpc: () => rpc('getTransactions', [{ filters: { protocols: tooMany } }]),
      mcp: () => mcp('getTransactions', { options: { filters: { protocols: tooMany } } }),
      graphql: () => graphql(`{ transactions(filters: { protocols: ${JSON.stringify(tooMany)} }) { pageInfo { hasNextPage } } }`),
    },
  },
  'a cursor the service did not issue (the one cursor codec)': {
    rule: /is not a pagination token this method issued/,
    doors: {
      rpc: () => rpc('getTransactions', [{ paginationToken: 'not-a-token' }]),
      mcp: () => mcp('getTransactions', { options: { paginationToken: 'not-a-token' } }),
      rest: () => rest('/transactions?cursor=not-a-token'),
      graphql: () => graphql('{ transactions(pagination: { after: "not-a-token" }) { pageInfo { hasNextPage } } }'),
    },
  },
  'fee statistics of an unknown protocol (protocol scope)': {
    rule: /unknown protocol "no_such_protocol"/,
    doors: {
      rest: () => rest('/analytics/fees?protocol_name=no_such_protocol'),
      graphql: () => graphql('{ transactions(filters: { protocols: ["no_such_protocol"] }, metrics: [AVG_FEE, P95_FEE]) { nodes { avgFee } } }'),
    },
  },
  'fee statistics over days out of order (ordered)': {
    rule: /is after/,
    doors: {
      rest: () => rest(`/analytics/fees?${REVERSED_DAYS}`),
      graphql: () => graphql(`{ transactions(filters: { ${REVERSED_RANGE} }, metrics: [AVG_FEE]) { nodes { avgFee } } }`),
    },
  },
};

describe('every door refuses the same invalid listing or fee request by the same rule', () => {
  it.each(Object.entries(CASES))('%s', async (_name, c) => {
    await expectSameRule(c);
  });
});
