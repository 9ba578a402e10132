// Page tokens outlive a deploy: a client pages on with the token an older build (or a replica
// not yet rolled) gave it. Each listing's fingerprint hashes its filters with their key names,
// so renaming a filter inside the service must leave the hashed bytes alone. The tokens below
// were minted by the code before the renames of issue 36 (the listings' `blockTime` filter
// named `range`, the question model's `success` merged into `status`), under the operator
// token 'pinned'; today's code must accept them and mint the very same ones.
import { describe, expect, it } from 'vitest';
import { PageTokens } from '../../api/analytics/paging/page-token.ts';
import { failuresQuestion, groupsQuestion, toFailurePage, toGroupPage, type GroupPageRequest } from '../../api/analytics/presets/group-pages.ts';
import type { AnswerRow } from '../../api/analytics/question/compile.ts';
import { addressCursorToken, checkAddressToken, type AddressListRequest } from '../../api/analytics/records/address-transactions.ts';
import { decodeSorted, sortedCursorOf } from '../../api/analytics/records/sorted-listing.ts';
import { decodeCursor, encodeCursor } from '../../api/analytics/records/transactions.ts';
import type { ListRequest } from '../../api/analytics/types.ts';

const tokens = new PageTokens('pinned');
const range = { gte: 1_700_000_000, lte: 1_700_086_399 };
const signature = '5'.repeat(87);
const filters: ListRequest['filters'] = {
  range,
  status: 'failed',
  protocols: ['raydium', 'pump_fun'],
  programIds: ['P1'],
  ranges: { fee: { min: '5000' } },
  logMessage: 'swap',
};

const MINTED = {
  listing:
    'WyJ0MiIsMTcwMDAwMDEyMywiNTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1IiwyLCJ1QWpLdk5zUU54akYiLCI0dFBQclV4WC1hdDBraHhSSTZibmpJIl0',
  sorted:
    'WyJzMSIsIjcwMDAiLDE3MDAwMDAxMjMsIjU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NSIsMiwiSzVTT184cjAwaGNWIiwiR1dydVNUVjZ1TThWZWJiY0QwQjVnZyJd',
  address: 'WyJhMyIsIjEyMzQ1Njc4OSIsImlZMnpYWktYcURhOSIsInlKblUxQkpuUU1veFpfbXdpVjdhdHIiXQ',
  groupSucceeded: 'WyJnMSIsNSwicHVtcF9mdW4iLCI3OUQ2b0xVaVJaS0IiLCJYdnA2M1BCVUFkc2d2VzRuMHREeWw4Il0',
  groupFailed: 'WyJnMSIsNSwicHVtcF9mdW4iLCJHLUx0Vnp0UkZiZVkiLCJqTDNtYjl0VWxOM0pQbExFcnozMzd0Il0',
  failure: 'WyJmMSIsMywicHVtcF9mdW4iLCJzbGlwcGFnZSBleGNlZWRlZCIsIk5lZVpfN0R3Tkw1byIsIjdYRDgwdjRvRzg4dWY2aUhVQjY0TWkiXQ',
};

describe('page tokens minted before the filters were renamed', () => {
  it('a record listing (filters.range, formerly blockTime) mints and resumes the same token', () => {
    const req = { filters, sortOrder: 'desc' as const };
    expect(encodeCursor(tokens, { blockTime: 1_700_000_123, signature, instructionIndex: 2 }, req)).toBe(MINTED.listing);
    expect(decodeCursor(tokens, MINTED.listing, req)).toEqual({ blockTime: 1_700_000_123, signature, instructionIndex: 2 });
  });

  it('a listing sorted by a record column mints and resumes the same token', () => {
    const req = { filters, sortOrder: 'asc' as const, sortBy: 'fee' as const, limit: 10 };
    expect(sortedCursorOf(tokens, { block_time: 1_700_000_123, signature, instruction_index: 2, fee: 7000 }, req)).toBe(MINTED.sorted);
    expect(decodeSorted(tokens, MINTED.sorted, req)).toMatchObject({ value: '7000', blockTime: 1_700_000_123, signature, instructionIndex: 2 });
  });

  it('an address listing mints and accepts the same token', () => {
    const req: AddressListRequest = { address: 'Addr1111', filters: { range, status: 'succeeded' }, sortOrder: 'desc', limit: 10 };
    expect(addressCursorToken(tokens, req, '123456789')).toBe(MINTED.address);
    expect(() => checkAddressToken(tokens, { ...req, cursor: MINTED.address })).not.toThrow();
  });

  it('pages of groups filtered by status (formerly success: true or false) mint and resume the same tokens', () => {
    const rows: AnswerRow[] = [{ protocol: 'pump_fun', values: { count: 5 } }];
    for (const [status, minted] of [
      ['succeeded', MINTED.groupSucceeded],
      ['failed', MINTED.groupFailed],
    ] as const) {
      const req: GroupPageRequest = {
        filters: { range, protocols: ['pump_fun'], status, ranges: { slot: { max: '99' } } },
        keys: ['protocol'],
        metrics: ['count'],
        sort: { metric: 'count', direction: 'desc' },
        limit: 1,
      };
      expect(toGroupPage(tokens, req, ['pump_fun'], rows).groups[0]?.cursor).toBe(minted);
      expect(groupsQuestion(tokens, { ...req, cursor: minted }, ['pump_fun']).page?.after).toEqual({ value: 5, keys: ['pump_fun'] });
    }
  });

  it('pages of failures by error message mint and resume the same token', () => {
    const req = { filters: { range, protocols: ['pump_fun'], errorPattern: 'slippage' }, keys: ['protocol' as const], metrics: ['count'], limit: 1 };
    const rows: AnswerRow[] = [{ protocol: 'pump_fun', errorMessage: 'slippage exceeded', values: { count: 3 } }];
    expect(toFailurePage(tokens, req, ['pump_fun'], rows).groups[0]?.cursor).toBe(MINTED.failure);
    expect(failuresQuestion(tokens, { ...req, cursor: MINTED.failure }, ['pump_fun']).page?.after).toEqual({
      value: 3,
      keys: ['pump_fun', 'slippage exceeded'],
    });
  });
});
