// API keys in the warehouse (migration 008). Secrets are generated here and only their
// SHA-256 hash is stored; the secret leaves this module once, in create()'s answer.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isPlan, type Plan } from '../core/plans.ts';
import type { Warehouse } from './warehouse.ts';
import { TABLES } from './tables.ts';

export const KEY_STATUSES = ['active', 'inactive', 'revoked'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];
export const isKeyStatus = (v: unknown): v is KeyStatus => typeof v === 'string' && (KEY_STATUSES as readonly string[]).includes(v);

/** Recognisable prefix: secret scanners and operators can tell what leaked. */
export const KEY_PREFIX = 'txa_';

export interface ApiKeyRecord {
  id: string;
  /** The first characters of the secret, for recognising a key in listings. */
  keyPrefix: string;
  name: string;
  plan: Plan;
  status: KeyStatus;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  key_hash: string;
  key_prefix: string;
  name: string;
  plan: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** ClickHouse DateTime64(3) text (UTC) from a JS time: the engine parses this form. */
const chTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
/** ISO 8601 from ClickHouse's "YYYY-MM-DD hh:mm:ss.sss" (UTC). */
export const isoFromCh = (t: string): string => `${t.replace(' ', 'T')}Z`;

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  keyPrefix: r.key_prefix,
  name: r.name,
  // A row this version cannot read fails closed: refused until fixed (warehouse/integrity.ts reports it).
  plan: isPlan(r.plan) ? r.plan : 'free',
  status: isKeyStatus(r.status) && isPlan(r.plan) ? r.status : 'inactive',
  createdAt: isoFromCh(r.created_at),
  updatedAt: isoFromCh(r.updated_at),
});

const COLUMNS = 'id, key_hash, key_prefix, name, plan, status, created_at, updated_at';

export class ApiKeyStore {
  // Changes read the current row and write a new one: serialised so two changes made
  // through this process cannot both start from the same old row.
  private writeTurn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly wh: Warehouse,
    private readonly now: () => number = Date.now,
  ) {}

  /** Create a key; the returned secret is never stored and cannot be read again. */
  async create(name: string, plan: Plan): Promise<{ record: ApiKeyRecord; secret: string }> {
    // 32 random bytes (256 bits) in base64url: 43 characters, URL- and header-safe.
    const secret = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const at = this.now();
    const row: Row = {
      id: randomUUID(),
      key_hash: hashSecret(secret),
      key_prefix: secret.slice(0, KEY_PREFIX.length + 6),
      name,
      plan,
      status: 'active',
      created_at: chTime(at),
      updated_at: chTime(at),
    };
    await this.wh.insert(TABLES.apiKeys, [row]);
    return { record: toRecord(row), secret };
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.wh.query<Row>(`SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL ORDER BY created_at, id`);
    return rows.map(toRecord);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.wh.query<Row>(`SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL WHERE id = {id:String}`, { params: { id } });
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** Every key by the hash of its secret: the authenticator's snapshot. */
  async byHash(): Promise<Map<string, ApiKeyRecord>> {
    const rows = await this.wh.query<Row>(`SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL`);
    return new Map(rows.map((r) => [r.key_hash, toRecord(r)]));
  }

  /** The key a presented secret belongs to, whatever its status; undefined when unknown. */
  async findBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.wh.query<Row>(
      `SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL WHERE key_hash = {hash:FixedString(64)} LIMIT 1`,
      { params: { hash: hashSecret(secret) } },
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** Change status and/or plan. A revoked key stays revoked: revocation is final. */
  update(id: string, change: { status?: KeyStatus; plan?: Plan }): Promise<ApiKeyRecord | undefined> {
    const run = this.writeTurn.then(() => this.applyUpdate(id, change));
    this.writeTurn = run.catch(() => undefined);
    return run;
  }

  private async applyUpdate(id: string, change: { status?: KeyStatus; plan?: Plan }): Promise<ApiKeyRecord | undefined> {
    const rows = await this.wh.query<Row>(`SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL WHERE id = {id:String}`, { params: { id } });
    const current = rows[0];
    if (!current) return undefined;
    if (current.status === 'revoked' && change.status !== undefined && change.status !== 'revoked') {
      throw new RevokedKeyError(id);
    }
    // updated_at must grow even when two changes land in the same millisecond, or
    // ReplacingMergeTree could keep the older of the two.
    const prev = Date.parse(isoFromCh(current.updated_at));
    const next: Row = {
      ...current,
      status: change.status ?? current.status,
      plan: change.plan ?? current.plan,
      updated_at: chTime(Math.max(this.now(), prev + 1)),
    };
    await this.wh.insert(TABLES.apiKeys, [next]);
    return toRecord(next);
  }
}

export class RevokedKeyError extends Error {
  constructor(readonly id: string) {
    super(`key ${id} is revoked; revocation cannot be undone (create a new key)`);
    this.name = 'RevokedKeyError';
  }
}
