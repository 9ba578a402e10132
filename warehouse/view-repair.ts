// Rebuilding the tables fed by materialized views on `transactions` for a set of
// (protocol_name, hour) buckets, from the base table. Used after an insert that did not
// finish (a crash between the base table's commit and a view's, or a failing view): the
// base table is the truth, and each view target's rows in those buckets are deleted and
// derived again with the view's own SELECT, so the repair is right whichever views had
// committed, and running it twice is harmless.
// In cluster mode (docs/cluster.md) the views read each node's transactions_local and write
// to local tables (or, for tx_by_address, through the Distributed table): the repair deletes
// the buckets on every shard (DELETE ... ON CLUSTER on the local tables) and derives them
// again from the whole base table (the Distributed transactions), inserting through the
// Distributed target, so the rows land where the sharding key places them.
import { VIEW_REPAIR_DELETE_KEYS } from '../core/limits/warehouse.ts';
import { localName } from './cluster-layout.ts';
import { SIGNATURE_RECORD_BUCKET } from './signature-records.ts';
import { TABLES } from './tables.ts';
import type { ClusterTarget, Warehouse } from './warehouse.ts';

const HOUR_SECONDS = 3600;

export interface Bucket {
  protocol_name: string;
  /** Unix seconds of the hour's start. */
  hour_start: number;
}

interface ViewDef {
  name: string;
  asSelect: string;
  target: string;
}

/** Materialized views reading `transactions` (`transactions_local` on a cluster), with their SELECT and target table. */
async function viewsOnTransactions(wh: Warehouse, source: string): Promise<ViewDef[]> {
  const rows = await wh.query<{ name: string; as_select: string; target: string }>(
    `SELECT name, as_select, extract(create_table_query, ' TO ([^ ]+)') AS target
     FROM system.tables
     WHERE database = currentDatabase() AND engine = 'MaterializedView'
       AND match(as_select, concat(' FROM (\`?[A-Za-z0-9_]+\`?\\\\.)?\`?', {source:String}, '\`?( |$)'))
     ORDER BY name`,
    { params: { source } },
  );
  return rows.map((r) => ({ name: r.name, asSelect: r.as_select, target: r.target }));
}

/**
 * How a target's rows are repaired: the expression that places a row in a bucket
 * ("protocol#hourUnixSeconds"), whose buckets are deleted and derived again; for a target
 * holding only max/min states (such as ingest_freshness), none: it is derived again without
 * deleting, as re-adding a max or min is harmless. A target holding whole records in one
 * column (tx_by_rid, migration 110) is placed by its record's fields, and the delete first
 * narrows to the keys of the buckets' base rows, so it reads a few granules, not the table.
 * The signature index (tx_rid_by_sig, 110) has no field to place a row by: its rows in the
 * buckets are the buckets' records' own (signature hash, instruction, id) entries, and only
 * those are deleted (a signature's other instructions may sit in another bucket, and a row
 * of another record under the same key and instruction has another id).
 */
async function repairRule(wh: Warehouse, target: string): Promise<RepairRule | undefined> {
  const [db, table] = target.includes('.') ? target.split('.', 2) : [undefined, target];
  const cols = await wh.query<{ name: string; type: string }>(
    `SELECT name, type FROM system.columns WHERE database = ${db ? '{db:String}' : 'currentDatabase()'} AND table = {t:String}`,
    { params: { db: (db ?? '').replace(/`/g, ''), t: (table ?? '').replace(/`/g, '') } },
  );
  const names = new Set(cols.map((c) => c.name));
  const hourOf = (col: string) => `concat(protocol_name, '#', toString(toUInt32(toStartOfHour(${col}))))`;
  // tx_by_rid (110): the same record array, keyed by the record id.
  if (names.has('rid') && names.has('record') && !names.has('protocol_name')) return { bucket: SIGNATURE_RECORD_BUCKET, byKey: true, key: 'rid' };
  if (names.has('sig_key') && names.has('instruction_index') && names.has('rid') && !names.has('protocol_name'))
    return { bucket: '', byKey: true, key: 'entry' };
  if (!names.has('protocol_name')) throw new Error(`view target ${target} has no protocol_name column: no repair rule for it`);
  if (names.has('hour_start')) return { bucket: hourOf('hour_start'), byKey: false };
  if (names.has('block_time')) return { bucket: hourOf('block_time'), byKey: false };
  const idempotent = cols.every((c) => c.name === 'protocol_name' || /^SimpleAggregateFunction\((max|min),/.test(c.type));
  if (idempotent) return undefined;
  throw new Error(`view target ${target} has neither hour_start nor block_time and is not max/min only: no repair rule for it`);
}

/** Delete and re-derive every view target's rows in `buckets` from the base table. */
export async function rebuildViewBuckets(wh: Warehouse, buckets: readonly Bucket[]): Promise<void> {
  if (buckets.length === 0) return;
  const params = {
    // "protocol#hourUnixSeconds" keys: plain strings bind reliably on both transports.
    keys: buckets.map((b) => `${b.protocol_name}#${b.hour_start}`),
    protocols: [...new Set(buckets.map((b) => b.protocol_name))],
    from: Math.min(...buckets.map((b) => b.hour_start)),
    to: Math.max(...buckets.map((b) => b.hour_start)) + HOUR_SECONDS - 1,
  };
  // The protocol and time-range terms let the base table's key prune; the tuple test is exact.
  const inBase = `protocol_name IN {protocols:Array(String)}
    AND block_time BETWEEN toDateTime({from:UInt32}, 'UTC') AND toDateTime({to:UInt32}, 'UTC')
    AND concat(protocol_name, '#', toString(toUInt32(toStartOfHour(block_time)))) IN {keys:Array(String)}`;
  const cluster = wh.cluster;
  const source = cluster === undefined ? TABLES.transactions : localName(TABLES.transactions);
  for (const view of await viewsOnTransactions(wh, source)) {
    const { insertInto, deleteFrom, readFrom } = cluster === undefined ? singleNode(view.target) : onCluster(view.target, cluster);
    const rule = await repairRule(wh, insertInto);
    if (rule?.byKey === true) {
      // Narrowed to the keys of the buckets' base rows, read first and bound as values: a
      // mutation of a replicated table may not hold a subquery (the server refuses it, as each
      // replica would evaluate it on its own). No base rows: none of this table's to delete.
      const key = rule.key ?? 'rid';
      const rows = await wh.query<{ k: string }>(`SELECT DISTINCT ${KEY_OF_BASE_ROW[key]} AS k FROM ${readFrom(source)} WHERE ${inBase}`, { params });
      const column = key === 'entry' ? 'sig_key' : key;
      const exact =
        key === 'entry'
          ? `${KEY_OF_BASE_ROW.entry.replace('cityHash64(signature)', 'sig_key')} IN {entries:Array(String)}`
          : `${rule.bucket} IN {keys:Array(String)}`;
      for (let i = 0; i < rows.length; i += VIEW_REPAIR_DELETE_KEYS) {
        const chunk = rows.slice(i, i + VIEW_REPAIR_DELETE_KEYS).map((r) => r.k);
        const sk = chunk.map((k) => BigInt(k.split('#')[0]!)); // numbers: a string array item is quoted, which Array(UInt64) does not read
        await wh.exec(`DELETE FROM ${deleteFrom} WHERE ${column} IN {sk:Array(UInt64)} AND ${exact}`, { params: { ...params, sk, entries: chunk } });
      }
    } else if (rule !== undefined) {
      await wh.exec(`DELETE FROM ${deleteFrom} WHERE ${rule.bucket} IN {keys:Array(String)}`, { params });
    }
    // The view's own SELECT, reading only the affected buckets of the base table (rid named:
    // a MATERIALIZED column is not in *, migration 110).
    const select = view.asSelect.replace(
      new RegExp(`( FROM )((\`?[A-Za-z0-9_]+\`?\\.)?\`?${source}\`?)( |$)`),
      (_m, from: string, table: string, _db: string, tail: string) => `${from}(SELECT *, rid FROM ${readFrom(table)} WHERE ${inBase}) AS ${source}${tail}`,
    );
    await wh.exec(`INSERT INTO ${insertInto} ${select}`, { params });
  }
}

/** How a target's rows are repaired (repairRule): by bucket alone, or narrowed first to keys of the buckets' base rows. */
interface RepairRule {
  bucket: string;
  byKey: boolean;
  key?: 'rid' | 'entry';
}

/** A base row's key in a keyed target, as text ("sig_key#instruction_index#rid" for an index entry). */
const KEY_OF_BASE_ROW = {
  rid: 'toString(rid)',
  entry: "concat(toString(cityHash64(signature)), '#', toString(instruction_index), '#', toString(rid))",
} as const;

interface RepairTables {
  /** Where the re-derived rows are inserted (and whose columns decide the rule). */
  insertInto: string;
  /** DELETE target, with ON CLUSTER when every shard holds some of the rows. */
  deleteFrom: string;
  /** The base table the rows are derived from, given the view's own FROM. */
  readFrom: (viewSource: string) => string;
}

function singleNode(target: string): RepairTables {
  return { insertInto: target, deleteFrom: target, readFrom: (t) => t };
}

/** A view target is a shard's local table or a Distributed table: repair all shards of it. */
function onCluster(target: string, cluster: ClusterTarget): RepairTables {
  const table = (target.includes('.') ? target.split('.', 2)[1]! : target).replace(/`/g, '');
  const logical = table.endsWith('_local') ? table.slice(0, -'_local'.length) : table;
  return {
    insertInto: `${cluster.database}.${logical}`,
    deleteFrom: `${cluster.database}.${localName(logical)} ON CLUSTER ${cluster.name}`,
    readFrom: () => `${cluster.database}.transactions`,
  };
}
