// Embedded transport: ClickHouse in-process through chDB. One engine per process and one
// data directory per engine, so the service runs as a single process in this mode.
import { mkdirSync } from 'node:fs';
import type { Session } from 'chdb';
import { SERVING_SESSIONS } from '../core/limits/warehouse.ts';
import { openSession, SessionPool } from './session-pool.ts';
import { SessionTurns } from './session-turns.ts';
import { withLiteralParams } from './literal-params.ts';
import { renderSettings, WarehouseError, type InsertOptions, type QueryOptions, type QueryParams, type Settings, type Warehouse } from './warehouse.ts';

interface ChdbLikeError {
  message: string;
  clickhouseCode?: number;
}

function wrap(err: unknown): WarehouseError {
  const e = err as ChdbLikeError;
  const code = typeof e?.clickhouseCode === 'number' ? e.clickhouseCode : codeFromMessage(e?.message);
  return new WarehouseError(String(e?.message ?? err), code, { cause: err });
}

function codeFromMessage(message: string | undefined): number | undefined {
  const m = /Code: (\d+)\./.exec(message ?? '');
  return m ? Number(m[1]) : undefined;
}

/** chDB has no per-call settings argument: they travel as a trailing SETTINGS clause. */
function withSettings(sql: string, settings: Settings | undefined): string {
  if (!settings || Object.keys(settings).length === 0) return sql;
  return `${sql}\nSETTINGS ${renderSettings(settings)}`;
}

/** The text chDB runs and the parameters it binds (none when they were written as literals). */
function statement(sql: string, options: QueryOptions): { text: string; params?: QueryParams } {
  if (options.params && options.literalParams === true) return { text: withSettings(withLiteralParams(sql, options.params), options.settings) };
  return { text: withSettings(sql, options.settings), params: options.params };
}

export class EmbeddedWarehouse implements Warehouse {
  readonly transport = 'embedded' as const;
  /** The serving sessions, each running its statements in turn (session-pool.ts); side sessions are apart. */
  private readonly serving: SessionPool;
  // Any other statement on a session ends that session's open stream (chDB answers the
  // stream's next read with "No active streaming query"), so streams get a session of
  // their own over the same data directory, opened on first use. chDB allows one open
  // stream per session: further streams wait their turn.
  private streamSession: Session | undefined;
  private streamQueue: Promise<void> = Promise.resolve();
  /** Sessions of QueryOptions.sideSession, by number, each opened on first use. */
  private readonly sideSessions: { session: Session; turns: SessionTurns }[] = [];

  /** `sessions`: serving sessions at most (1 for a worker that runs one statement at a time anyway). */
  constructor(
    private readonly dataDir: string,
    options: { sessions?: number } = {},
  ) {
    mkdirSync(dataDir, { recursive: true });
    this.serving = new SessionPool(dataDir, options.sessions ?? SERVING_SESSIONS);
  }

  async query<T>(sql: string, options: QueryOptions = {}): Promise<T[]> {
    // Same row shape as a ClickHouse server's default: 64-bit integers as strings. The rows
    // come as JSONEachRowWithProgress (the same values as JSONEachRow, each under "row"), whose
    // progress line says what the statement read (the result's own rowsRead counts rows
    // returned), for the answer's statistics.
    const settings = { output_format_json_quote_64bit_integers: 1, ...options.settings };
    const text = await this.queryText(sql, 'JSONEachRowWithProgress', { ...options, settings });
    const rows: T[] = [];
    let rowsRead = 0;
    let bytesRead = 0;
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      const item = JSON.parse(line) as { row?: T; progress?: { read_rows?: string; read_bytes?: string } };
      if (item.row !== undefined) rows.push(item.row);
      else if (item.progress !== undefined) {
        // Progress is cumulative: the largest figure is the statement's.
        rowsRead = Math.max(rowsRead, Number(item.progress.read_rows ?? 0));
        bytesRead = Math.max(bytesRead, Number(item.progress.read_bytes ?? 0));
      }
    }
    options.onStats?.({ rowsRead, bytesRead });
    return rows;
  }

  async queryText(sql: string, format: string, options: QueryOptions = {}): Promise<string> {
    const turns = options.sideSession === undefined ? this.serving.turns() : this.side(options.sideSession);
    try {
      const { text, params } = statement(sql, options);
      const result = await turns.run(
        (session) => (params ? session.queryBindAsync(text, params, { format }) : session.queryAsync(text, { format })),
        options.signal,
      );
      return result.text();
    } catch (err) {
      throw wrap(err);
    }
  }

  async *stream(sql: string, format: string, options: QueryOptions = {}): AsyncIterable<Uint8Array> {
    let release!: () => void;
    const turn = this.streamQueue;
    this.streamQueue = new Promise<void>((r) => (release = r));
    await turn;
    try {
      let stream: ReturnType<Session['queryStream']>;
      try {
        const { text, params } = statement(sql, options);
        stream = params
          ? this.streams().queryStreamBind(text, params, { format, signal: options.signal })
          : this.streams().queryStream(text, { format, signal: options.signal });
      } catch (err) {
        throw wrap(err);
      }
      // chDB formats each streamed block on its own, so a *WithNames format repeats its
      // header at the start of every chunk; a server sends it once. Strip the repeats.
      const headerLines = /WithNamesAndTypes$/i.test(format) ? 2 : /WithNames$/i.test(format) ? 1 : 0;
      let header: Buffer | undefined;
      try {
        for await (const chunk of stream) {
          const bytes = Buffer.from(chunk.raw());
          if (headerLines > 0 && header === undefined) {
            let end = -1;
            for (let i = 0; i < headerLines; i++) end = bytes.indexOf(10, end + 1);
            header = end < 0 ? undefined : bytes.subarray(0, end + 1);
            yield bytes;
          } else if (header !== undefined && bytes.subarray(0, header.length).equals(header)) {
            yield bytes.subarray(header.length);
          } else {
            yield bytes;
          }
        }
      } catch (err) {
        throw wrap(err);
      } finally {
        stream.cancel();
      }
    } finally {
      release();
    }
  }

  async insert(table: string, rows: readonly object[], options: InsertOptions = {}): Promise<void> {
    if (rows.length === 0) return;
    let payload = '';
    for (const row of rows) payload += `${JSON.stringify(row)}\n`;
    try {
      await this.serving.turns().run((session) =>
        session.insert({
          table,
          values: Buffer.from(payload),
          format: 'JSONEachRow',
          columns: options.columns,
          settings: options.settings,
        }),
      );
    } catch (err) {
      throw wrap(err);
    }
  }

  async insertBytes(table: string, data: Uint8Array, format: string, options: InsertOptions = {}): Promise<void> {
    if (data.byteLength === 0) return;
    try {
      await this.serving.turns().run((session) =>
        session.insert({
          table,
          values: Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength),
          // chDB's type names the formats it streams; any input format name is accepted.
          format: format as 'JSONEachRow',
          columns: options.columns,
          settings: options.settings,
        }),
      );
    } catch (err) {
      throw wrap(err);
    }
  }

  async exec(sql: string, options: QueryOptions = {}): Promise<void> {
    await this.queryText(sql, 'TSV', options);
  }

  /** Serving sessions open now (they open on demand, up to the constructor's `sessions`). */
  get servingSessions(): number {
    return this.serving.opened;
  }

  private streams(): Session {
    if (this.streamSession === undefined) {
      this.streamSession = openSession(this.dataDir);
    }
    return this.streamSession;
  }

  private side(n: number): SessionTurns {
    let side = this.sideSessions[n];
    if (side === undefined) {
      const session = openSession(this.dataDir);
      side = this.sideSessions[n] = { session, turns: new SessionTurns(session) };
    }
    return side.turns;
  }

  async close(): Promise<void> {
    await Promise.all(this.sideSessions.map((s) => s?.turns.ended()));
    for (const s of this.sideSessions) s?.session.close();
    this.streamSession?.close();
    await this.serving.close();
  }
}
