// After a migration creates a materialized view: wait until every insert that began before
// it has ended. An insert builds its chain of views when it begins, so one already running
// writes the new view's source rows without the view; a migration that copies the old table
// (021's and 090's capture-then-copy) relies on every such row being in the old table when
// the copy reads it. An ingest batch of another process in flight during an upgrade was
// otherwise missed (test/migration-090-inflight.test.ts).
import { MIGRATION_INSERT_POLL_MS, MIGRATION_INSERT_WAIT_MS } from '../core/limits/warehouse.ts';
import type { Warehouse } from './warehouse.ts';

/** Whether a rendered statement creates a materialized view (then the runner waits: awaitEarlierInserts). */
export const createsView = (statement: string): boolean => /^\s*CREATE\s+MATERIALIZED\s+VIEW\b/i.test(statement.replace(/^\s*--[^\n]*\n/gm, ''));

export async function awaitEarlierInserts(wh: Warehouse, sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
  // Every node's inserts in cluster mode (an insert runs where its client sent it).
  const processes = wh.cluster === undefined ? 'system.processes' : `clusterAllReplicas(${quoteName(wh.cluster.name)}, system.processes)`;
  const [start] = await wh.query<{ t: string }>("SELECT toString(now64(6, 'UTC')) AS t");
  const since = start!.t;
  for (let waited = 0; ; waited += MIGRATION_INSERT_POLL_MS) {
    // Begun at or before `since`: running for at least as long as since has passed.
    const [row] = await wh.query<{ n: string; q: string }>(
      `SELECT count() AS n, any(substring(query, 1, 120)) AS q FROM ${processes}
       WHERE query_kind = 'Insert' AND query_id != queryID()
         AND elapsed * 1000000 >= dateDiff('microsecond', toDateTime64({since:String}, 6, 'UTC'), now64(6, 'UTC'))`,
      { params: { since } },
    );
    if (Number(row?.n ?? 0) === 0) return;
    if (waited >= MIGRATION_INSERT_WAIT_MS) {
      throw new Error(
        `an insert begun before the new view is still running after ${MIGRATION_INSERT_WAIT_MS / 1000} s (${row?.q ?? ''}); stop it or wait, then start again: the migration resumes`,
      );
    }
    await sleep(MIGRATION_INSERT_POLL_MS);
  }
}

/** A cluster name as the string literal clusterAllReplicas takes (it comes from configuration). */
function quoteName(name: string): string {
  return `'${name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
