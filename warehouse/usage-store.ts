// Per-key usage in the warehouse (migration 009): batched writes from the API processes,
// reads for the operator API. Every read aggregates with sum()/max(), so rows of the same
// minute written by several flushes or processes count once each, merged or not.
import type { Warehouse } from './warehouse.ts';
import { TABLES } from './tables.ts';

export interface UsageRow {
  keyId: string;
  /** Start of the minute, milliseconds since the epoch. */
  minute: number;
  interface: string;
  method: string;
  requests: number;
  errors: number;
  rateLimited: number;
  /** Cost in the plan's units, and rows and bytes read, of the requests counted here (migration 070). */
  cost: number;
  rowsRead: number;
  bytesRead: number;
  /** Time of the last request counted in this row, milliseconds since the epoch. */
  lastUsedAt: number;
}

export interface UsageQuery {
  keyId?: string;
  /** Only these keys (an account's); an empty list matches nothing. */
  keyIds?: readonly string[];
  fromMs: number;
  toMs: number;
  /** Bucket size of the answer: minute, hour or day. */
  granularity: 'minute' | 'hour' | 'day';
}

export interface UsageBucket {
  keyId: string;
  bucket: string;
  interface: string;
  method: string;
  requests: number;
  errors: number;
  rateLimited: number;
  cost: number;
  rowsRead: number;
  bytesRead: number;
}

const chSeconds = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');
const chMillis = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

// Fixed SQL per granularity: the bucket function is chosen from this map, never spliced
// from input.
const BUCKET: Record<UsageQuery['granularity'], string> = {
  minute: 'minute',
  hour: 'toStartOfHour(minute)',
  day: 'toStartOfDay(minute)',
};

export class UsageStore {
  constructor(private readonly wh: Warehouse) {}

  async insert(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.wh.insert(
      TABLES.apiKeyUsage,
      rows.map((r) => ({
        key_id: r.keyId,
        minute: chSeconds(r.minute),
        interface: r.interface,
        method: r.method,
        requests: r.requests,
        errors: r.errors,
        rate_limited: r.rateLimited,
        cost: Math.round(r.cost),
        rows_read: Math.round(r.rowsRead),
        bytes_read: Math.round(r.bytesRead),
        last_used_at: chMillis(r.lastUsedAt),
      })),
    );
  }

  async query(q: UsageQuery): Promise<UsageBucket[]> {
    const rows = await this.wh.query<{
      key_id: string;
      bucket: string;
      interface: string;
      method: string;
      requests: string;
      errors: string;
      rate_limited: string;
      cost: string;
      rows_read: string;
      bytes_read: string;
    }>(
      `SELECT key_id, ${BUCKET[q.granularity]} AS bucket, interface, method,
              sum(requests) AS requests, sum(errors) AS errors, sum(rate_limited) AS rate_limited,
              sum(cost) AS cost, sum(rows_read) AS rows_read, sum(bytes_read) AS bytes_read
       FROM ${TABLES.apiKeyUsage}
       WHERE minute >= {from:DateTime('UTC')} AND minute < {to:DateTime('UTC')}
         ${q.keyId === undefined ? '' : 'AND key_id = {key:String}'}
         ${q.keyIds === undefined ? '' : 'AND key_id IN {keys:Array(String)}'}
       GROUP BY key_id, bucket, interface, method
       ORDER BY key_id, bucket, interface, method
       LIMIT 100000`,
      {
        params: {
          from: chSeconds(q.fromMs),
          to: chSeconds(q.toMs),
          ...(q.keyId === undefined ? {} : { key: q.keyId }),
          ...(q.keyIds === undefined ? {} : { keys: [...q.keyIds] }),
        },
      },
    );
    return rows.map((r) => ({
      keyId: r.key_id,
      bucket: `${r.bucket.replace(' ', 'T')}Z`,
      interface: r.interface,
      method: r.method,
      requests: Number(r.requests),
      errors: Number(r.errors),
      rateLimited: Number(r.rate_limited),
      cost: Number(r.cost),
      rowsRead: Number(r.rows_read),
      bytesRead: Number(r.bytes_read),
    }));
  }

  /** Last recorded use of one key (ISO 8601), or null when never used. */
  async lastUsedOf(keyId: string): Promise<string | null> {
    const rows = await this.wh.query<{ n: string; last: string }>(
      `SELECT count() AS n, max(last_used_at) AS last FROM ${TABLES.apiKeyUsage} WHERE key_id = {key:String}`,
      { params: { key: keyId } },
    );
    const row = rows[0];
    return row && Number(row.n) > 0 ? `${row.last.replace(' ', 'T')}Z` : null;
  }

  /** Last recorded use per key id (ISO 8601); keys never used are absent. */
  async lastUsed(): Promise<Map<string, string>> {
    const rows = await this.wh.query<{ key_id: string; last: string }>(`SELECT key_id, max(last_used_at) AS last FROM ${TABLES.apiKeyUsage} GROUP BY key_id`);
    return new Map(rows.map((r) => [r.key_id, `${r.last.replace(' ', 'T')}Z`]));
  }
}
