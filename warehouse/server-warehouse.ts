// Server transport: a ClickHouse server (or cluster) over HTTP with @clickhouse/client.
// Used when CLICKHOUSE_URL is set; API and ingest then scale as separate processes.
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { SERVER_REQUEST_TIMEOUT_MS } from '../core/limits/warehouse.ts';
import { WarehouseError, type ClusterTarget, type InsertOptions, type QueryOptions, type Warehouse } from './warehouse.ts';

export interface ServerWarehouseOptions {
  url: string;
  user: string;
  password: string;
  database: string;
  /** Cluster mode: the cluster's name (CLICKHOUSE_CLUSTER; docs/cluster.md). */
  cluster?: string | undefined;
}

/**
 * What cluster mode needs of every statement (docs/cluster.md, "Reads and writes"); the
 * caller's own settings come after these and may override them.
 *  - reads: a subquery or JOIN over a Distributed table inside a query over another one
 *    (an address listing's details, 021's copy) runs once and is sent to the shards
 *    (GLOBAL), instead of being refused ("double-distributed") or read shard-locally.
 *  - writes: an INSERT through a Distributed table returns only once every shard has the
 *    rows (not from a background queue), and each shard's part is on a majority of its
 *    replicas (both, with two): "queryable when it returns" holds on whichever replica the
 *    next read, or the next batch's identity check, reaches.
 */
export const CLUSTER_READ_SETTINGS = Object.freeze({ distributed_product_mode: 'global' });
export const CLUSTER_WRITE_SETTINGS = Object.freeze({
  distributed_product_mode: 'global',
  distributed_foreground_insert: 1,
  insert_quorum: 'auto',
});

function wrap(err: unknown): WarehouseError {
  const e = err as { message?: string; code?: string };
  const code = e?.code !== undefined && /^\d+$/.test(e.code) ? Number(e.code) : undefined;
  return new WarehouseError(String(e?.message ?? err), code, { cause: err });
}

/** What a statement read, from the server's X-ClickHouse-Summary header (wait_end_of_query makes it final). */
function reportSummary(header: string | string[] | undefined, onStats: NonNullable<QueryOptions['onStats']>): void {
  if (typeof header !== 'string') return;
  try {
    const s = JSON.parse(header) as { read_rows?: string; read_bytes?: string };
    onStats({ rowsRead: Number(s.read_rows ?? 0), bytesRead: Number(s.read_bytes ?? 0) });
  } catch {
    // A summary the server did not send whole: the statistics go without this statement.
  }
}

export class ServerWarehouse implements Warehouse {
  readonly transport = 'server' as const;
  readonly cluster: ClusterTarget | undefined;
  private readonly client: ClickHouseClient;
  private readonly readSettings: ClickHouseSettings;
  private readonly writeSettings: ClickHouseSettings;

  constructor(options: ServerWarehouseOptions) {
    this.cluster = options.cluster === undefined ? undefined : { name: options.cluster, database: options.database };
    this.readSettings = options.cluster === undefined ? {} : (CLUSTER_READ_SETTINGS as ClickHouseSettings);
    this.writeSettings = options.cluster === undefined ? {} : (CLUSTER_WRITE_SETTINGS as unknown as ClickHouseSettings);
    this.client = createClient({
      url: options.url,
      username: options.user,
      password: options.password,
      database: options.database,
      // Statements must be complete before we answer (ingest says "queryable when it returns").
      clickhouse_settings: { wait_end_of_query: 1 },
      request_timeout: SERVER_REQUEST_TIMEOUT_MS,
      // Failures surface as WarehouseError to the caller, which decides what to log.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async query<T>(sql: string, options: QueryOptions = {}): Promise<T[]> {
    try {
      const rs = await this.client.query({
        query: sql,
        format: 'JSONEachRow',
        query_params: options.params,
        // Explicit, so every server (and the test shim) gives 64-bit integers as strings.
        clickhouse_settings: { output_format_json_quote_64bit_integers: 1, ...this.readSettings, ...(options.settings as ClickHouseSettings | undefined) },
        abort_signal: options.signal,
      });
      const rows = await rs.json<T>();
      if (options.onStats !== undefined) reportSummary(rs.response_headers['x-clickhouse-summary'], options.onStats);
      return rows;
    } catch (err) {
      throw wrap(err);
    }
  }

  async queryText(sql: string, format: string, options: QueryOptions = {}): Promise<string> {
    try {
      const rs = await this.client.exec({
        query: `${sql}\nFORMAT ${format}`,
        query_params: options.params,
        clickhouse_settings: { ...this.readSettings, ...(options.settings as ClickHouseSettings | undefined) },
        abort_signal: options.signal,
      });
      const chunks: Buffer[] = [];
      for await (const c of rs.stream as Readable) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      throw wrap(err);
    }
  }

  async *stream(sql: string, format: string, options: QueryOptions = {}): AsyncIterable<Uint8Array> {
    let body: Readable;
    try {
      const rs = await this.client.exec({
        query: `${sql}\nFORMAT ${format}`,
        query_params: options.params,
        // wait_end_of_query first: a readonly=1 among the caller's settings freezes every setting after it.
        clickhouse_settings: { wait_end_of_query: 0, ...this.readSettings, ...(options.settings as ClickHouseSettings | undefined) },
        abort_signal: options.signal,
      });
      body = rs.stream as Readable;
    } catch (err) {
      throw wrap(err);
    }
    try {
      for await (const c of body) yield c as Buffer;
    } catch (err) {
      throw wrap(err);
    } finally {
      body.destroy();
    }
  }

  async insert(table: string, rows: readonly object[], options: InsertOptions = {}): Promise<void> {
    if (rows.length === 0) return;
    try {
      await this.client.insert({
        table,
        values: rows as object[],
        format: 'JSONEachRow',
        columns: options.columns ? ([...options.columns] as [string, ...string[]]) : undefined,
        clickhouse_settings: { ...this.writeSettings, ...(options.settings as ClickHouseSettings | undefined) },
      });
    } catch (err) {
      throw wrap(err);
    }
  }

  async insertBytes(table: string, data: Uint8Array, format: string, options: InsertOptions = {}): Promise<void> {
    if (data.byteLength === 0) return;
    const name = /^[A-Za-z_][A-Za-z0-9_]*$/;
    if (!name.test(table) || !name.test(format) || !(options.columns ?? []).every((c) => name.test(c))) {
      throw new WarehouseError(`invalid table, format or column name for an insert into ${table}`, undefined);
    }
    const columns = options.columns ? ` (${options.columns.join(', ')})` : '';
    try {
      // client.insert() JSON-encodes what it is given; exec() with values sends the bytes
      // as the request body under the statement's own FORMAT clause.
      const res = await this.client.exec({
        query: `INSERT INTO ${table}${columns} FORMAT ${format}`,
        values: Readable.from([Buffer.from(data.buffer, data.byteOffset, data.byteLength)], { objectMode: false }),
        clickhouse_settings: options.settings as ClickHouseSettings | undefined,
      });
      res.stream.resume();
      await new Promise<void>((resolve, reject) => res.stream.on('end', resolve).on('error', reject));
    } catch (err) {
      throw wrap(err);
    }
  }

  async exec(sql: string, options: QueryOptions = {}): Promise<void> {
    try {
      await this.client.command({
        query: sql,
        query_params: options.params,
        clickhouse_settings: { ...this.writeSettings, ...(options.settings as ClickHouseSettings | undefined) },
        abort_signal: options.signal,
      });
    } catch (err) {
      throw wrap(err);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
