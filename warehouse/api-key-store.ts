// API keys in the warehouse (migrations 009 and 031). Secrets are generated here and only their
// SHA-256 hash is stored; the secret leaves this module once, in create()'s answer.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SECRET_BYTES } from '../core/limits/access.ts';
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
  /** The plan the key is served with: its account's plan when it has an account. */
  plan: Plan;
  status: KeyStatus;
  createdAt: string;
  updatedAt: string;
  /** The owning dashboard account ('' for keys made through the operator API). */
  accountId: string;
  /** Environment label given at creation ('' when none). */
  environment: string;
  /** The owning account is disabled: the key is refused whatever its own status. */
  accountDisabled: boolean;
}

interface Row {
  id: string;
  key_hash: string;
  key_prefix: string;
  name: string;
  account_id: string;
  environment: string;
  plan: string;
  status: string;
  created_at: string;
  updated_at: string;
}

/** A key row with its account's plan and status ('' for a key without an account). */
interface JoinedRow extends Row {
  account_plan: string;
  account_status: string;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** ClickHouse DateTime64(3) text (UTC) from a JS time: the engine parses this form. */
const chTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
/** ISO 8601 from ClickHouse's "YYYY-MM-DD hh:mm:ss.sss" (UTC). */
export const isoFromCh = (t: string): string => `${t.replace(' ', 'T')}Z`;

const toRecord = (r: Row | JoinedRow): ApiKeyRecord => {
  const accountPlan = 'account_plan' in r ? r.account_plan : '';
  const ownPlan: Plan = isPlan(r.plan) ? r.plan : 'free';
  return {
    id: r.id,
    keyPrefix: r.key_prefix,
    name: r.name,
    plan: r.account_id !== '' && isPlan(accountPlan) ? accountPlan : ownPlan,
    // A row this version cannot read fails closed: refused until fixed (warehouse/integrity.ts reports it).
    status: isKeyStatus(r.status) && isPlan(r.plan) ? r.status : 'inactive',
    createdAt: isoFromCh(r.created_at),
    updatedAt: isoFromCh(r.updated_at),
    accountId: r.account_id,
    environment: r.environment,
    // A key whose account row cannot be found is refused too (fail closed).
    accountDisabled: r.account_id !== '' && 'account_status' in r && r.account_status !== 'active',
  };
};

const COLUMNS = 'id, key_hash, key_prefix, name, account_id, environment, plan, status, created_at, updated_at';

/** Keys with their account's plan and status: every read that serves a key goes through it,
 *  so an account's plan change or disabling reaches its keys at the next snapshot reload. */
const JOINED = `SELECT k.id AS id, k.key_hash AS key_hash, k.key_prefix AS key_prefix, k.name AS name,
         k.account_id AS account_id, k.environment AS environment, k.plan AS plan, k.status AS status,
         k.created_at AS created_at, k.updated_at AS updated_at, a.plan AS account_plan, a.status AS account_status
  FROM (SELECT ${COLUMNS} FROM ${TABLES.apiKeys} FINAL) AS k
  LEFT JOIN (SELECT id, plan, status FROM ${TABLES.accounts} FINAL) AS a ON a.id = k.account_id`;

export class ApiKeyStore {
  // Changes read the current row and write a new one: serialised so two changes made
  // through this process cannot both start from the same old row.
  private writeTurn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly wh: Warehouse,
    private readonly now: () => number = Date.now,
  ) {}

  /** Create a key; the returned secret is never stored and cannot be read again. */
  async create(name: string, plan: Plan, owner: { accountId?: string; environment?: string } = {}): Promise<{ record: ApiKeyRecord; secret: string }> {
    // SECRET_BYTES random bytes (256 bits) in base64url: 43 characters, URL- and header-safe.
    const secret = `${KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
    const at = this.now();
    const row: Row = {
      id: randomUUID(),
      key_hash: hashSecret(secret),
      key_prefix: secret.slice(0, KEY_PREFIX.length + 6),
      name,
      account_id: owner.accountId ?? '',
      environment: owner.environment ?? '',
      plan,
      status: 'active',
      created_at: chTime(at),
      updated_at: chTime(at),
    };
    await this.wh.insert(TABLES.apiKeys, [row]);
    return { record: toRecord(row), secret };
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.wh.query<JoinedRow>(`${JOINED} ORDER BY created_at, id`);
    return rows.map(toRecord);
  }

  /** The keys of one dashboard account, oldest first. */
  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.wh.query<JoinedRow>(`${JOINED} WHERE k.account_id = {account:String} ORDER BY created_at, id`, { params: { account: accountId } });
    return rows.map(toRecord);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.wh.query<JoinedRow>(`${JOINED} WHERE k.id = {id:String}`, { params: { id } });
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** Every key by the hash of its secret: the authenticator's snapshot. */
  async byHash(): Promise<Map<string, ApiKeyRecord>> {
    const rows = await this.wh.query<JoinedRow>(JOINED);
    return new Map(rows.map((r) => [r.key_hash, toRecord(r)]));
  }

  /** The key a presented secret belongs to, whatever its status; undefined when unknown. */
  async findBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.wh.query<JoinedRow>(`${JOINED} WHERE k.key_hash = {hash:FixedString(64)} LIMIT 1`, { params: { hash: hashSecret(secret) } });
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
    // Read back through the join: the answer shows the plan the key is served with.
    return (await this.get(id)) ?? toRecord(next);
  }
}

export class RevokedKeyError extends Error {
  constructor(readonly id: string) {
    super(`key ${id} is revoked; revocation cannot be undone (create a new key)`);
    this.name = 'RevokedKeyError';
  }
}
