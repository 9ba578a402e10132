// Cluster mode (CLICKHOUSE_CLUSTER; docs/cluster.md): how each table of the numbered
// migrations is laid out on a sharded, replicated ClickHouse cluster, and the renderer that
// turns one single-node migration statement into the statements a cluster runs.
//
// Why a renderer and not a second set of migration files: the .sql files stay the one
// definition of the schema, byte for byte what a single node runs (their checksums are what
// existing installs recorded, so not a comment of them may change), and a cluster install
// gets the same columns, keys, codecs, TTLs and view SELECTs by construction. What the
// renderer needs beyond the file is the role of each table, below; a statement it does not
// recognise, or a table without a role, is an error, so a new migration cannot silently
// create a table on one node only (test/cluster-migrations.test.ts walks every migration).
//
// Two roles:
//  - sharded: the rows are spread over the shards. `<name>_local` is the Replicated* table
//    on every node (Keeper path per shard, one replica per node), and `<name>` is a
//    Distributed table over it, so every query keeps the table name it uses today (TABLES in
//    warehouse/tables.ts still means "what queries read"). Materialized views run on each
//    node's `transactions_local`, on the node where a block is inserted.
//  - everywhere: small tables (registry, keys, usage, accounts, sessions, journal, dead
//    letters, the migration log) replicated to every node of the cluster: one Keeper path for
//    the whole cluster, so each node holds the whole table, any node answers a read alone, and
//    FINAL and point lookups work exactly as on one node.
import type { ClusterTarget } from './warehouse.ts';
import { QUOTED_STATEMENT_MAX_CHARS } from '../core/limits/warehouse.ts';

export type TableRole =
  | {
      kind: 'sharded';
      /** The Distributed table's sharding key: which shard an inserted row goes to. */
      shardingKey: string;
      /**
       * Where a materialized view on transactions writes this table's rows: into the local
       * table of the node that received the base rows ('local'), or through the Distributed
       * table, which sends each row to the shard of its own key ('distributed').
       */
      viewWrites: 'local' | 'distributed';
      why: string;
    }
  | { kind: 'everywhere'; why: string }
  /** A writer's scratch table (Memory): each node its own, read only by the statements of the
   *  writer that filled it on that node; nothing replicated, nothing sharded. */
  | { kind: 'node-local'; why: string }
  /**
   * A key → value lookup a migration builds, fills once and reads by key in a mutation
   * (110's Join table). A Join table has no replicated form and an INSERT reaches one node,
   * so in a cluster its rows go to an everywhere-replicated `<name>_rows` table and each node
   * reads them through a dictionary of the same name (dictGet in place of joinGet).
   */
  | { kind: 'lookup'; why: string };

const HOURLY_WHY =
  'hourly states stay on the shard whose base rows produced them (the view writes locally, no network hop per insert); ' +
  'a (protocol, hour) may so have rows on every shard, and every read already aggregates (sum, min, max, uniqExactMerge, ' +
  'quantilesTDigestMerge GROUP BY), which over the Distributed table merges the states of all shards: exact for counts, ' +
  "sums and distinct counts. Keeping a protocol's hours on one shard instead would put most of the load on the shard of the " +
  'busiest protocol and send every view row across the network. The key only places rows inserted directly (view repair, backfills).';

export const CLUSTER_LAYOUT: Readonly<Record<string, TableRole>> = Object.freeze({
  transactions: {
    kind: 'sharded',
    shardingKey: 'cityHash64(signature)',
    viewWrites: 'local',
    why: "a record's instructions stay together and land on the shard that also holds its tx_by_rid and tx_rid_by_sig rows (sig_key = cityHash64(signature)); listings by protocol and time read every shard in parallel",
  },
  tx_by_signature: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: 'the layout 021 replaces; same placement as tx_by_signature_v2',
  },
  tx_by_signature_v2: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: "sig_key = cityHash64(signature), the base table's own key: the view writes on the node holding the base rows, which is the shard the Distributed key would choose, and a lookup by signature touches one shard (optimize_skip_unused_shards)",
  },
  tx_by_signature_v3: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: 'the layout 090 puts in place of tx_by_signature_v2 (the record in one column): the same placement, so each shard copies its own rows and a lookup by signature still touches one shard',
  },
  tx_by_signature_v2_compact: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: "migration 080's twin of tx_by_signature_v2, swapped in by REPLACE PARTITION: the same placement, so each shard swaps its own rows",
  },
  tx_by_address: {
    kind: 'sharded',
    shardingKey: 'address_key',
    viewWrites: 'distributed',
    why: "one address's whole history on one shard: an address listing reads one shard in key order (keyset cursor unchanged); the view sends each row to its address's shard, since an address's records were signed on every shard",
  },
  tx_by_address_listing: {
    kind: 'sharded',
    shardingKey: 'address_key',
    viewWrites: 'distributed',
    why: "as tx_by_address, whose order and keys it shares: one address's listing rows on one shard, read in key order",
  },
  ingest_keys: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: "sig_key = cityHash64(signature), the base table's own sharding key: the view writes on the node holding the base rows, and ingest's de-duplication asks every shard for the keys of its batch's seconds",
  },
  protocol_hourly: { kind: 'sharded', shardingKey: 'cityHash64(protocol_name)', viewWrites: 'local', why: HOURLY_WHY },
  instruction_hourly: { kind: 'sharded', shardingKey: 'cityHash64(protocol_name)', viewWrites: 'local', why: HOURLY_WHY },
  failure_hourly: { kind: 'sharded', shardingKey: 'cityHash64(protocol_name)', viewWrites: 'local', why: HOURLY_WHY },
  ingest_freshness: {
    kind: 'sharded',
    shardingKey: 'cityHash64(protocol_name)',
    viewWrites: 'local',
    why: 'max() states per shard, merged by max() in every read',
  },
  protocols: { kind: 'everywhere', why: "a dozen rows read with FINAL by every process and in the sandbox's row policy" },
  dead_letters: { kind: 'everywhere', why: 'rejections are rare (kept 30 days); an operator reads them from any node' },
  ingest_lines: { kind: 'node-local', why: "an NDJSON body's lines between their load and their routing (migration 121), on the node the writer talks to" },
  ingest_checked: { kind: 'node-local', why: 'the checks of those lines, read by the same writer on the same node (migration 121)' },
  ingest_journal: {
    kind: 'everywhere',
    why: 'each writer reads its own unfinished entries, and the API reads finished batches, from whichever node it reaches',
  },
  api_keys: { kind: 'everywhere', why: 'thousands of rows read whole with FINAL by every API replica' },
  api_key_usage: { kind: 'everywhere', why: 'per-minute sums per key, merged by sum() in reads; small next to the records' },
  accounts: { kind: 'everywhere', why: 'read with FINAL by id or email' },
  dashboard_sessions: { kind: 'everywhere', why: 'a point read by token hash with FINAL on every dashboard call' },
  x402_payments: { kind: 'everywhere', why: 'one row per paid call, read by payer for revenue; small next to the records' },
  x402_payment_claims: { kind: 'everywhere', why: 'a claim per paid call, read back by payment id by whichever API process verified it; kept a day' },
  tx_by_rid: {
    kind: 'sharded',
    shardingKey: 'cityHash64(JSONExtractString(record, 1))',
    viewWrites: 'local',
    why: "the record array starts with its signature, so the key is the base table's own (cityHash64(signature)): the view writes on the node holding the base rows and a repair's direct insert lands where the view would have written; a page reads every shard in parallel (rid IN a GLOBAL subquery)",
  },
  tx_rid_by_sig: {
    kind: 'sharded',
    shardingKey: 'sig_key',
    viewWrites: 'local',
    why: "sig_key = cityHash64(signature), the base table's own key, as tx_by_signature_v3's which it replaces (110): the view writes on the node holding the base rows, and a signature's index rows sit on the shard of its records in tx_by_rid, so a lookup's rid IN (index) is answered on each shard by its own rows",
  },
  tx_by_address_v2: {
    kind: 'sharded',
    shardingKey: 'address_key',
    viewWrites: 'distributed',
    why: "as tx_by_address_listing, which 110 replaces: one address's rows on one shard, read in (address_key, rid) order",
  },
  rid_assign_110: {
    kind: 'lookup',
    why: "migration 110's numbering of the records stored before it: filled once from the whole store (the Distributed transactions, so the ids equal a single node's), read by every node's mutation of its own shard, dropped at the end",
  },
  schema_migrations: { kind: 'everywhere', why: 'every node (and any process reaching any node) sees which migrations ran' },
});

/** The table a sharded table's rows are stored in on each node. */
export const localName = (table: string): string => `${table}_local`;

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';
const q = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function roleOf(table: string): TableRole {
  const role = CLUSTER_LAYOUT[table];
  if (role === undefined) throw new Error(`no cluster role for table ${table}: add it to CLUSTER_LAYOUT (warehouse/cluster-layout.ts)`);
  return role;
}

/** Leading `--` comment lines of a statement, kept in front of the first rendered statement. */
function splitComments(statement: string): { comments: string; body: string } {
  const lines = statement.split('\n');
  let i = 0;
  while (i < lines.length && (lines[i]!.trim().startsWith('--') || lines[i]!.trim() === '')) i++;
  return {
    comments: lines
      .slice(0, i)
      .map((l) => `${l}\n`)
      .join(''),
    body: lines.slice(i).join('\n'),
  };
}

/** `ENGINE = XMergeTree[(args)]` as its replicated form with a Keeper path and the replica macro. */
function replicatedEngine(engine: string, args: string | undefined, keeperPath: string): string {
  if (!/^(Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing)?MergeTree$/.test(engine)) {
    throw new Error(`engine ${engine} has no replicated form the cluster renderer knows`);
  }
  const rest = args !== undefined && args.trim() !== '' ? `, ${args.trim()}` : '';
  return `ENGINE = Replicated${engine}(${q(keeperPath)}, '{replica}'${rest})`;
}

/** `<name>_rows`: where a lookup's rows are kept, replicated to every node. */
const rowsName = (table: string): string => `${table}_rows`;

/**
 * A lookup's Join table as the replicated rows table plus a dictionary over it on every node
 * (the dictionary reads the node's own replica: no network per key in the mutation).
 */
function renderLookup(table: string, columns: string, engine: string, args: string | undefined, on: string, cluster: ClusterTarget): string[] {
  const keys = (args ?? '')
    .split(',')
    .map((a) => a.trim())
    .slice(2);
  if (engine !== 'Join' || keys.length === 0) throw new Error(`lookup ${table} must be a Join(ANY, LEFT, keys…) table to be rendered for a cluster`);
  const cols = columns.trim().replace(/^\(|\)$/g, '');
  const rows = rowsName(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${rows} ${on}\n(${cols})\n` +
      `ENGINE = ReplicatedMergeTree(${q(`/clickhouse/tables/all/{database}/${rows}`)}, '{replica}')\nORDER BY (${keys.join(', ')})`,
    `CREATE DICTIONARY IF NOT EXISTS ${table} ${on}\n(${cols})\nPRIMARY KEY ${keys.join(', ')}\n` +
      `SOURCE(CLICKHOUSE(DB ${q(cluster.database)} TABLE ${q(rows)}))\nLAYOUT(COMPLEX_KEY_HASHED())\nLIFETIME(0)`,
  ];
}

const CREATE_TABLE = new RegExp(`^CREATE TABLE IF NOT EXISTS (${IDENT})(\\s*\\([\\s\\S]*\\)\\s*)ENGINE = (${IDENT})(?:\\(([^)]*)\\))?([\\s\\S]*)$`);
const CREATE_VIEW = new RegExp(`^CREATE MATERIALIZED VIEW IF NOT EXISTS (${IDENT}) TO (${IDENT}) AS\\b([\\s\\S]*)$`);
const DROP = new RegExp(`^DROP (TABLE|VIEW) IF EXISTS (${IDENT})$`);
const ALTER = new RegExp(`^ALTER TABLE (${IDENT}) ([\\s\\S]+)$`);
const INSERT = new RegExp(`^INSERT INTO (${IDENT})\\b`);
const CREATE_PLAIN = new RegExp(`^CREATE (FUNCTION|VIEW) IF NOT EXISTS (${IDENT}) AS\\b([\\s\\S]*)$`);
const TRUNCATE = new RegExp(`^TRUNCATE TABLE (${IDENT})$`);

/** An `ALTER TABLE` as the statements a cluster runs: a view's new SELECT, a partition swap, a
 *  table's settings, a mutation from a lookup, or column changes. */
function renderAlter(table: string, commands: string, on: string): string[] {
  if (/^MODIFY QUERY\b/.test(commands)) {
    // A view's new SELECT: each node's view reads its own shard of the base table.
    const view = table;
    const sources = [...commands.matchAll(new RegExp(`\\bFROM (${IDENT})\\b`, 'g'))].map((x) => x[1]!);
    if (sources.length !== 1 || sources[0] !== 'transactions') throw new Error(`view ${view} must read only FROM transactions to be rendered for a cluster`);
    return [`ALTER TABLE ${view} ${on} ${commands.replace(/\bFROM transactions\b/, `FROM ${localName('transactions')}`)}`];
  }
  const replace = new RegExp(`^REPLACE PARTITION (\\S+) FROM (${IDENT})((?: SETTINGS .*)?)$`).exec(commands);
  if (replace) {
    // Parts move between the stored tables of one node (each shard swaps its own rows).
    const [, partition, from, settings] = replace as unknown as [string, string, string, string];
    if (roleOf(table).kind !== roleOf(from).kind) throw new Error(`REPLACE PARTITION between ${table} and ${from}: both must be sharded, or both everywhere`);
    const name = (t: string) => (roleOf(t).kind === 'everywhere' ? t : localName(t));
    return [`ALTER TABLE ${name(table)} ${on} REPLACE PARTITION ${partition} FROM ${name(from)}${settings}`];
  }
  if (/^MODIFY SETTING\b/.test(commands)) {
    // MergeTree settings (a merge policy) belong to the stored table; a Distributed table has none.
    return [`ALTER TABLE ${roleOf(table).kind === 'everywhere' ? table : localName(table)} ${on} ${commands}`];
  }
  const update = /^UPDATE (\w+) = joinGet\('([^']+)', '(\w+)', (.+?)\)\s+WHERE ([\s\S]+?) SETTINGS ([\s\S]+)$/.exec(commands);
  if (update) {
    // A mutation reading a lookup: each shard's replicas update their own rows, each from the
    // dictionary on its node, the same rows everywhere (hence deterministic, which the server
    // cannot see: a dictionary read is refused in a replicated mutation without the setting).
    const [, column, lookup, attribute, keys, where, settings] = update as unknown as string[];
    if (roleOf(table).kind !== 'sharded' || roleOf(lookup!.split('.').at(-1)!).kind !== 'lookup') {
      throw new Error(`ALTER TABLE ${table} UPDATE: only a sharded table updated from a lookup is rendered for a cluster`);
    }
    return [
      `ALTER TABLE ${localName(table)} ${on} UPDATE ${column} = dictGet('${lookup}', '${attribute}', (${keys})) ` +
        `WHERE ${where} SETTINGS ${settings}, allow_nondeterministic_mutations = 1`,
    ];
  }
  if (!/^(ADD|DROP|MODIFY|COMMENT|RENAME) COLUMN\b/.test(commands)) {
    throw new Error(`ALTER TABLE ${table}: only column changes are rendered for a cluster, got "${commands.slice(0, QUOTED_STATEMENT_MAX_CHARS)}"`);
  }
  if (roleOf(table).kind === 'everywhere') return [`ALTER TABLE ${table} ${on} ${commands}`];
  // The stored columns first, then the Distributed table's view of them.
  return [`ALTER TABLE ${localName(table)} ${on} ${commands}`, `ALTER TABLE ${table} ${on} ${commands}`];
}

/**
 * One single-node statement as the statements a cluster runs (in order). DDL gets
 * `ON CLUSTER`, so every node runs it (Keeper's distributed DDL queue); inserts are unchanged:
 * they name the Distributed or everywhere-replicated table, and the server warehouse sends
 * them with distributed_foreground_insert and a quorum (server-warehouse.ts).
 */
export function renderForCluster(statement: string, cluster: ClusterTarget): string[] {
  const { comments, body } = splitComments(statement.trim());
  const on = `ON CLUSTER ${cluster.name}`;
  const out = (statements: string[]): string[] => statements.map((s, i) => (i === 0 ? comments + s : s));

  let m = CREATE_TABLE.exec(body);
  if (m) {
    const [, table, columns, engine, args, rest] = m as unknown as [string, string, string, string, string | undefined, string];
    const role = roleOf(table);
    if (role.kind === 'node-local') return out([`CREATE TABLE IF NOT EXISTS ${table} ${on}${columns}ENGINE = ${engine}${rest}`]);
    if (role.kind === 'lookup') return out(renderLookup(table, columns, engine, args, on, cluster));
    if (role.kind === 'everywhere') {
      return out([`CREATE TABLE IF NOT EXISTS ${table} ${on}${columns}${replicatedEngine(engine, args, `/clickhouse/tables/all/{database}/${table}`)}${rest}`]);
    }
    const local = localName(table);
    return out([
      `CREATE TABLE IF NOT EXISTS ${local} ${on}${columns}${replicatedEngine(engine, args, `/clickhouse/tables/{shard}/{database}/${local}`)}${rest}`,
      `CREATE TABLE IF NOT EXISTS ${table} ${on} AS ${cluster.database}.${local}\n` +
        `ENGINE = Distributed(${q(cluster.name)}, ${q(cluster.database)}, ${q(local)}, ${role.shardingKey})`,
    ]);
  }

  m = CREATE_VIEW.exec(body);
  if (m) {
    const [, view, target, select] = m as unknown as [string, string, string, string];
    const role = roleOf(target);
    if (role.kind !== 'sharded') throw new Error(`view ${view} writes to ${target}, which is not sharded: views run on each shard's rows`);
    const sources = [...select.matchAll(new RegExp(`\\bFROM (${IDENT})\\b`, 'g'))].map((x) => x[1]!);
    if (sources.length !== 1 || sources[0] !== 'transactions') {
      throw new Error(`view ${view} must read only FROM transactions to be rendered for a cluster, reads ${sources.join(', ') || 'nothing'}`);
    }
    const to = role.viewWrites === 'local' ? localName(target) : target;
    return out([
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${view} ${on} TO ${to} AS${select.replace(/\bFROM transactions\b/, `FROM ${localName('transactions')}`)}`,
    ]);
  }

  m = CREATE_PLAIN.exec(body);
  if (m) {
    // A SQL function or a plain view is a definition, not data: every node gets it.
    const [, kind, name, rest] = m as unknown as [string, string, string, string];
    return out([`CREATE ${kind} IF NOT EXISTS ${name} ${on} AS${rest}`]);
  }

  m = DROP.exec(body);
  if (m) {
    const [, kind, name] = m as unknown as [string, 'TABLE' | 'VIEW', string];
    if (kind === 'VIEW') return out([`DROP VIEW IF EXISTS ${name} ${on} SYNC`]);
    const role = roleOf(name);
    if (role.kind === 'lookup') return out([`DROP DICTIONARY IF EXISTS ${name} ${on} SYNC`, `DROP TABLE IF EXISTS ${rowsName(name)} ${on} SYNC`]);
    if (role.kind === 'everywhere') return out([`DROP TABLE IF EXISTS ${name} ${on} SYNC`]);
    // The Distributed table first: nothing may read through it into a dropped local table.
    return out([`DROP TABLE IF EXISTS ${name} ${on} SYNC`, `DROP TABLE IF EXISTS ${localName(name)} ${on} SYNC`]);
  }

  m = ALTER.exec(body);
  if (m) return out(renderAlter(m[1]!, m[2]!, on));

  m = INSERT.exec(body);
  if (m) {
    if (roleOf(m[1]!).kind !== 'lookup') return out([body]);
    // One insert into the replicated rows; every replica has them before any dictionary loads.
    const rows = rowsName(m[1]!);
    return out([body.replace(INSERT, `INSERT INTO ${rows}`), `SYSTEM SYNC REPLICA ${on} ${rows}`, `SYSTEM RELOAD DICTIONARY ${on} ${m[1]!}`]);
  }

  m = TRUNCATE.exec(body);
  if (m) {
    if (roleOf(m[1]!).kind !== 'lookup') throw new Error(`TRUNCATE TABLE ${m[1]!}: only a lookup's rows are truncated in a cluster`);
    return out([`TRUNCATE TABLE IF EXISTS ${rowsName(m[1]!)} ${on} SYNC`]);
  }

  throw new Error(`statement not rendered for a cluster (add a rule to warehouse/cluster-layout.ts): ${body.slice(0, QUOTED_STATEMENT_MAX_CHARS)}`);
}
