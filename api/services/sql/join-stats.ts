// What the join pricing (join-cost.ts) needs to know about the published tables' data,
// measured on the engine and kept for a while: a table's rows, how many rows at most share
// one value of a join key, and how long an array column's arrays get. ClickHouse 26.7 has
// column statistics (ALTER TABLE … ADD STATISTICS, experimental), but only the optimizer
// reads them: SQL sees their description, not their numbers, and the published tables
// declare none. So the numbers are measured here over a bounded read (the first
// SQL_JOIN_SAMPLE_ROWS rows of the table) and reused for SQL_JOIN_STATS_TTL_MS.
import {
  SQL_JOIN_DISTINCT_KEY_SHARE,
  SQL_JOIN_LOCAL_REPEAT_MAX,
  SQL_JOIN_MEASURE_MAX_ROWS,
  SQL_JOIN_MEASURE_SECONDS,
  SQL_JOIN_MEASUREMENTS_PER_QUERY,
  SQL_JOIN_SAMPLE_ROWS,
  SQL_JOIN_STATS_MAX_ENTRIES,
  SQL_JOIN_STATS_TTL_MS,
} from '../../../core/limits/sql.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';
import { KEY_FUNCTIONS, type JoinFacts } from './join-cost.ts';

// A measurement's own limits: it runs on the client's sandbox slot, before the client's
// query. No readonly: the statements are the service's own, and the sandbox user of server
// mode holds readonly = 2 CONST, where sending one is an error.
// Past the time or the rows, the measurement stops and keeps what it read (a smaller sample).
const MEASURE_SETTINGS: Settings = {
  max_execution_time: SQL_JOIN_MEASURE_SECONDS,
  timeout_overflow_mode: 'break',
  max_threads: 1,
  max_rows_to_read: SQL_JOIN_MEASURE_MAX_ROWS,
  read_overflow_mode: 'break',
};

const PLAIN_NAME = /^\w+$/;

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

export class JoinStats {
  private readonly entries = new Map<string, Entry<unknown>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** New measurements one query may still cause: one object per query, shared by its pricing passes. */
  static budget(): { left: number } {
    return { left: SQL_JOIN_MEASUREMENTS_PER_QUERY };
  }

  /**
   * The facts one query's join pricing reads: `estimated`, the rows the engine expects per
   * table read. Measurements run on the client's slot: a few per query (`budget`), however
   * many joins it has.
   */
  facts(wh: Warehouse, estimated: readonly { table: string; rows: number }[], budget = JoinStats.budget()): JoinFacts {
    return {
      // EXPLAIN ESTIMATE sums every read of a table: a self-join's side is capped at the table's rows.
      sideRows: async (table) => {
        const total = await this.tableRows(wh, table).catch(() => Infinity);
        return Math.min(total, estimated.find((t) => t.table === table)?.rows ?? total);
      },
      keyTop: (table, columns) => this.keyTop(wh, table, columns, budget).catch(() => Infinity),
      arrayLength: (table, column) => this.arrayLength(wh, table, column, budget),
    };
  }

  /**
   * Rows the table holds now (active parts), for the cap of a side's estimate. Not cached:
   * it is one read of the parts list, and a stale count (a table that was empty) would
   * price a join of today's rows by yesterday's.
   */
  async tableRows(wh: Warehouse, table: string): Promise<number> {
    const [row] = await wh.query<{ n: string }>(
      'SELECT sum(rows) AS n FROM system.parts WHERE active AND database = currentDatabase() AND table = {t:String}',
      { params: { t: table }, settings: MEASURE_SETTINGS },
    );
    return Number(row?.n ?? 0);
  }

  /**
   * Most rows of the table that share one value of `columns` (one tuple for several),
   * measured on the sample: the start of the table in its storage order (one protocol, one
   * time span), where a low-cardinality column looks even less varied than it is. A key
   * that nearly identifies rows (signature: the instructions of one transaction, stored
   * side by side) keeps its count, which does not grow with the table; any other key is
   * scaled to the table, its most common value keeping its share (core/limits/, SQL join
   * pricing). Unknown columns, a type GROUP BY refuses, or no measurement left for this
   * query: the table's rows.
   */
  async keyTop(wh: Warehouse, table: string, columns: readonly string[], budget: { left: number }): Promise<number> {
    const total = await this.tableRows(wh, table);
    const names = [...new Set(columns)].sort();
    const terms = names.map(keyTerm);
    if (terms.length === 0 || terms.some((t) => t === undefined)) return total;
    const sample = await this.remember(`top\u0000${table}\u0000${names.join('\u0000')}`, budget, async () => {
      // Column names are bound as identifiers; a function name comes from KEY_FUNCTIONS itself.
      const exprs = terms.map((t, i) => (t!.fn === undefined ? `{c${i}:Identifier} AS k${i}` : `${t!.fn}({c${i}:Identifier}) AS k${i}`)).join(', ');
      const keys = terms.map((_, i) => `k${i}`).join(', ');
      const params: Record<string, unknown> = { t: table, n: SQL_JOIN_SAMPLE_ROWS, ...Object.fromEntries(terms.map((t, i) => [`c${i}`, t!.column])) };
      const [row] = await wh.query<{ sampled: string; values: string; top: string }>(
        `SELECT sum(c) AS sampled, count() AS values, max(c) AS top FROM (SELECT count() AS c FROM (SELECT ${exprs} FROM {t:Identifier} LIMIT {n:UInt64}) GROUP BY ${keys})`,
        { params, settings: MEASURE_SETTINGS },
      );
      const sampled = Number(row?.sampled ?? 0);
      // An empty table proves nothing about the rows to come: not kept, the worst case meanwhile.
      if (sampled === 0) throw new Error('empty sample');
      return { sampled, values: Number(row?.values ?? 0), top: Number(row?.top ?? sampled) };
    }).catch(() => undefined);
    if (sample === undefined) return total;
    const distinct = sample.values >= sample.sampled * SQL_JOIN_DISTINCT_KEY_SHARE && sample.top <= SQL_JOIN_LOCAL_REPEAT_MAX;
    const top = distinct || sample.sampled >= total ? sample.top : Math.ceil((sample.top / sample.sampled) * total);
    return Math.min(total, Math.max(1, top));
  }

  /** The longest array of an array column in the sample (an ARRAY JOIN multiplies each row by its array's length). */
  async arrayLength(wh: Warehouse, table: string, column: string, budget: { left: number }): Promise<number> {
    if (!PLAIN_NAME.test(column)) return Infinity;
    const n = await this.remember(`len\u0000${table}\u0000${column}`, budget, async () => {
      const [row] = await wh.query<{ n: string }>(
        // length() alone reads the arrays' sizes, not their elements.
        'SELECT max(l) AS n FROM (SELECT length({c:Identifier}) AS l FROM {t:Identifier} LIMIT {n:UInt64})',
        { params: { t: table, c: column, n: SQL_JOIN_SAMPLE_ROWS }, settings: MEASURE_SETTINGS },
      );
      return Math.max(1, Number(row?.n ?? 1));
    }).catch(() => undefined);
    return n ?? Infinity;
  }

  /** A kept measurement, or a new one while the query has some left (else undefined: the worst case). */
  private async remember<T>(key: string, budget: { left: number }, load: () => Promise<T>): Promise<T | undefined> {
    const hit = this.entries.get(key) as Entry<T> | undefined;
    if (hit && this.now() - hit.at <= SQL_JOIN_STATS_TTL_MS) return hit.value;
    if (budget.left <= 0) return undefined;
    budget.left -= 1;
    if (this.entries.size >= SQL_JOIN_STATS_MAX_ENTRIES) {
      // Oldest first (insertion order): a bounded cache however many key sets clients try.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const value = load();
    // A failed measurement is not kept: a later query measures again.
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    this.entries.delete(key);
    this.entries.set(key, { at: this.now(), value });
    return value;
  }
}

/**
 * `col` or `fn(col)` with fn one of KEY_FUNCTIONS (the set's own string, not the caller's).
 * Column names are bound as identifiers; an unknown one is an engine error, and the
 * measurement's failure prices the key at the worst case.
 */
function keyTerm(term: string): { column: string; fn?: string } | undefined {
  const m = /^(\w+)\((\w+)\)$/.exec(term);
  if (!m) return PLAIN_NAME.test(term) ? { column: term } : undefined;
  const fn = [...KEY_FUNCTIONS].find((f) => f === m[1]);
  return fn === undefined ? undefined : { column: m[2]!, fn };
}
