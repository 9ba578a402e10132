// One migration runner at a time on a server. Every process applies the pending migrations
// at start (the API, the ingest service, replicas), and two applying one at once run its
// statements twice: two copies of 090 stored every record twice in tx_by_signature_v3
// (test/migration-runner-lock.test.ts). The lock is a table: creating a table that exists
// fails, so exactly one runner creates it. Its holder renews a lease in it; a runner that
// finds the lease over (its holder died) renames the table away, which exactly one can do,
// and competes to create it again. A migration's statements are written to be re-run
// (IF NOT EXISTS, copies minus what is there), so one cut short by a dead holder is resumed.
//
// In cluster mode the order of starts is the deployment's (docs/cluster.md: one API node
// migrates, the others wait for it to be healthy); this table would be one node's alone.
import { randomUUID } from 'node:crypto';
import { MIGRATION_LOCK_LEASE_MS, MIGRATION_LOCK_POLL_MS, MIGRATION_LOCK_RENEW_MS } from '../core/limits/warehouse.ts';
import { ClickHouseCode, WarehouseError, type Warehouse } from './warehouse.ts';

const LOCK = 'schema_migrations_lock';
const { TABLE_ALREADY_EXISTS, UNKNOWN_TABLE } = ClickHouseCode;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const isCode = (err: unknown, code: number): boolean => err instanceof WarehouseError && err.clickhouseCode === code;

/** Run `fn` holding the server's migration lock (waiting for it while another runner holds it). */
export async function withMigrationLock<T>(wh: Warehouse, fn: () => Promise<T>): Promise<T> {
  const owner = randomUUID();
  const renew = (): Promise<void> =>
    wh.exec(`INSERT INTO ${LOCK} SELECT {o:String}, now64(3, 'UTC') + toIntervalMillisecond({ms:UInt32})`, {
      params: { o: owner, ms: MIGRATION_LOCK_LEASE_MS },
    });
  for (;;) {
    try {
      await wh.exec(`CREATE TABLE ${LOCK} (owner String, until DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`);
      await renew();
      break;
    } catch (err) {
      if (!isCode(err, TABLE_ALREADY_EXISTS)) throw err;
    }
    await takeOverIfLapsed(wh);
    await sleep(MIGRATION_LOCK_POLL_MS);
  }
  // Renewed while `fn` runs (a statement may take minutes); a failed renewal is retried at the next tick.
  const timer = setInterval(() => void renew().catch(() => {}), MIGRATION_LOCK_RENEW_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    await release(wh, owner);
  }
}

/** A lock whose lease is over (or that never got one within a lease of its creation): rename it away and drop it. */
async function takeOverIfLapsed(wh: Warehouse): Promise<void> {
  let lapsed: boolean;
  try {
    const [r] = await wh.query<{ lapsed: number | boolean }>(
      `SELECT greatest((SELECT max(until) FROM ${LOCK}),
                       (SELECT any(metadata_modification_time) FROM system.tables WHERE database = currentDatabase() AND name = {t:String}) + toIntervalMillisecond({ms:UInt32}))
              < now64(3, 'UTC') AS lapsed`,
      { params: { t: LOCK, ms: MIGRATION_LOCK_LEASE_MS } },
    );
    lapsed = Boolean(Number(r?.lapsed ?? 0));
  } catch (err) {
    if (isCode(err, UNKNOWN_TABLE)) return; // released meanwhile: compete to create it again
    throw err;
  }
  if (!lapsed) return;
  const aside = `${LOCK}_lapsed_${randomUUID().replace(/-/g, '')}`;
  try {
    await wh.exec(`RENAME TABLE ${LOCK} TO ${aside}`);
  } catch (err) {
    if (isCode(err, UNKNOWN_TABLE)) return; // another runner took it over first
    throw err;
  }
  await wh.exec(`DROP TABLE IF EXISTS ${aside} SYNC`);
}

/** Drop the lock if it is still this runner's (a lock taken over after a lapse is another's table). */
async function release(wh: Warehouse, owner: string): Promise<void> {
  try {
    const [r] = await wh.query<{ n: string }>(`SELECT count() AS n FROM ${LOCK} WHERE owner = {o:String}`, { params: { o: owner } });
    if (Number(r?.n ?? 0) > 0) await wh.exec(`DROP TABLE IF EXISTS ${LOCK} SYNC`);
  } catch (err) {
    if (!isCode(err, UNKNOWN_TABLE)) throw err;
  }
}
