// The facade's one entry of prepared answers (Analytics.prepare, api/analytics/prepared-answers.ts)
// is keyed by operation and typed per key: each key takes its own checked request and gives its
// own answer, so a door cannot hand one operation's request to another. The type assertions are
// checked by `tsc --noEmit` (npm run check); the runtime one, that every key has its preparer.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Analytics, Checked, Prepared, ProtocolStatsWithPrograms } from '../../api/analytics/analytics.ts';
import type { ConnectionPage } from '../../api/analytics/paging/connection.ts';
import { PREPARERS, type PreparedOp } from '../../api/analytics/prepared-answers.ts';
import type { Group, GroupPageRequest, Series, SeriesRequest } from '../../api/analytics/presets/group-pages.ts';
import type { ListRequest, Transaction } from '../../api/analytics/types.ts';

describe('Analytics.prepare: one entry, keyed by operation', () => {
  it('has one preparer per operation, and no other', () => {
    const ops: PreparedOp[] = ['records', 'groups', 'failures', 'series', 'stats'];
    expect(Object.keys(PREPARERS).sort()).toEqual([...ops].sort());
  });

  it('gives each operation its own answer type, from its own checked request', () => {
    const series = (a: Analytics, c: Checked<SeriesRequest>) => a.prepare('series', c);
    expectTypeOf(series).returns.resolves.toEqualTypeOf<Prepared<Series[]>>();
    const groups = (a: Analytics, c: Checked<GroupPageRequest>) => a.prepare('groups', c, { budget: 1 });
    expectTypeOf(groups).returns.resolves.toEqualTypeOf<Prepared<ConnectionPage<Group>>>();
    const records = (a: Analytics, c: Checked<ListRequest>) => a.prepare('records', c);
    expectTypeOf(records).returns.resolves.toEqualTypeOf<Prepared<ConnectionPage<Transaction>>>();
    const stats = (a: Analytics) => a.prepare('stats', { protocols: ['jupiter_v6'], range: {} });
    expectTypeOf(stats).returns.resolves.toEqualTypeOf<Prepared<ProtocolStatsWithPrograms[]>>();
    // @ts-expect-error a series request is not a page of groups
    const wrong = (a: Analytics, c: Checked<SeriesRequest>) => a.prepare('groups', c);
    expect(typeof wrong).toBe('function');
  });
});
