// Dashboard accounts and their sessions in the warehouse (migrations 030 and 032). This
// module stores what it is given: password hashing, token generation and every rule about
// who may do what live in api/doors/dashboard/. Session tokens and invite tokens are stored only
// as SHA-256 hashes.
import { createHash, randomUUID } from 'node:crypto';
import { isPlan, type Plan } from '../core/plans.ts';
import { isoFromCh } from './api-key-store.ts';
import { TABLES } from './tables.ts';
import type { Warehouse } from './warehouse.ts';

export const ACCOUNT_STATUSES = ['invited', 'active', 'disabled'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
const isAccountStatus = (v: unknown): v is AccountStatus => typeof v === 'string' && (ACCOUNT_STATUSES as readonly string[]).includes(v);

export interface AccountRecord {
  id: string;
  email: string;
  /** "scrypt$N$r$p$salt$hash", or '' for an invitation not yet accepted. */
  passwordHash: string;
  plan: Plan;
  status: AccountStatus;
  /** SHA-256 of the pending invitation's token ('' when none). */
  inviteHash: string;
  /** Milliseconds since the epoch; 0 when there is no invitation. */
  inviteExpiresAt: number;
  createdAt: string;
  updatedAt: string;
}

export interface SessionRecord {
  tokenHash: string;
  accountId: string;
  csrfToken: string;
  ended: boolean;
  createdAt: number;
  expiresAt: number;
}

interface AccountRow {
  id: string;
  email: string;
  password_hash: string;
  plan: string;
  status: string;
  invite_hash: string;
  invite_expires_at: string;
  created_at: string;
  updated_at: string;
}

interface SessionRow {
  token_hash: string;
  account_id: string;
  csrf_token: string;
  ended: number;
  created_at: string;
  expires_at: string;
  updated_at: string;
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

const chTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
const msFromCh = (t: string): number => Date.parse(isoFromCh(t));

const toAccount = (r: AccountRow): AccountRecord => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  plan: isPlan(r.plan) ? r.plan : 'free',
  status: isAccountStatus(r.status) ? r.status : 'disabled',
  inviteHash: r.invite_hash,
  inviteExpiresAt: r.invite_hash === '' ? 0 : msFromCh(r.invite_expires_at),
  createdAt: isoFromCh(r.created_at),
  updatedAt: isoFromCh(r.updated_at),
});

const toRow = (a: AccountRecord, updatedAt: number): AccountRow => ({
  id: a.id,
  email: a.email,
  password_hash: a.passwordHash,
  plan: a.plan,
  status: a.status,
  invite_hash: a.inviteHash,
  invite_expires_at: chTime(a.inviteExpiresAt),
  created_at: chTime(Date.parse(a.createdAt)),
  updated_at: chTime(updatedAt),
});

const ACCOUNT_COLUMNS = 'id, email, password_hash, plan, status, invite_hash, invite_expires_at, created_at, updated_at';
const SESSION_COLUMNS = 'token_hash, account_id, csrf_token, ended, created_at, expires_at, updated_at';

export interface NewAccount {
  email: string;
  passwordHash: string;
  plan: Plan;
  status: AccountStatus;
  inviteHash?: string;
  inviteExpiresAt?: number;
}

export type AccountChange = Partial<Pick<AccountRecord, 'plan' | 'status' | 'passwordHash' | 'inviteHash' | 'inviteExpiresAt'>>;

export class AccountStore {
  // Changes read the current row and write a new one: serialised in this process so two
  // changes cannot both start from the same old row (as in ApiKeyStore).
  private writeTurn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly wh: Warehouse,
    private readonly now: () => number = Date.now,
  ) {}

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writeTurn.then(work);
    this.writeTurn = run.catch(() => undefined);
    return run;
  }

  /** Create an account unless one has this email (lower-cased by the caller): undefined then. */
  create(a: NewAccount): Promise<AccountRecord | undefined> {
    return this.inTurn(async () => {
      if ((await this.findByEmail(a.email)) !== undefined) return undefined;
      const at = this.now();
      const record: AccountRecord = {
        id: randomUUID(),
        email: a.email,
        passwordHash: a.passwordHash,
        plan: a.plan,
        status: a.status,
        inviteHash: a.inviteHash ?? '',
        inviteExpiresAt: a.inviteExpiresAt ?? 0,
        createdAt: new Date(at).toISOString(),
        updatedAt: new Date(at).toISOString(),
      };
      await this.wh.insert(TABLES.accounts, [toRow(record, at)]);
      return record;
    });
  }

  async get(id: string): Promise<AccountRecord | undefined> {
    const rows = await this.wh.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM ${TABLES.accounts} FINAL WHERE id = {id:String}`, { params: { id } });
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async findByEmail(email: string): Promise<AccountRecord | undefined> {
    const rows = await this.wh.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM ${TABLES.accounts} FINAL WHERE email = {email:String} ORDER BY created_at LIMIT 1`,
      { params: { email } },
    );
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async findByInvite(inviteHash: string): Promise<AccountRecord | undefined> {
    if (inviteHash === '') return undefined;
    const rows = await this.wh.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM ${TABLES.accounts} FINAL WHERE invite_hash = {h:String} LIMIT 1`, {
      params: { h: inviteHash },
    });
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    const rows = await this.wh.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM ${TABLES.accounts} FINAL ORDER BY created_at, id LIMIT 100000`);
    return rows.map(toAccount);
  }

  /** Apply a change; `guard` sees the current record and may refuse by throwing. */
  update(id: string, change: AccountChange, guard?: (current: AccountRecord) => void): Promise<AccountRecord | undefined> {
    return this.inTurn(async () => {
      const current = await this.get(id);
      if (!current) return undefined;
      guard?.(current);
      const next: AccountRecord = { ...current, ...change };
      // updated_at must grow even for two changes in one millisecond (ReplacingMergeTree
      // keeps the row with the greatest version).
      const at = Math.max(this.now(), Date.parse(current.updatedAt) + 1);
      await this.wh.insert(TABLES.accounts, [toRow(next, at)]);
      return { ...next, updatedAt: new Date(at).toISOString() };
    });
  }

  // ---- sessions ----------------------------------------------------------------------

  async createSession(s: { tokenHash: string; accountId: string; csrfToken: string; expiresAt: number }): Promise<SessionRecord> {
    const at = this.now();
    await this.wh.insert(TABLES.dashboardSessions, [
      {
        token_hash: s.tokenHash,
        account_id: s.accountId,
        csrf_token: s.csrfToken,
        ended: 0,
        created_at: chTime(at),
        expires_at: chTime(s.expiresAt),
        updated_at: chTime(at),
      },
    ]);
    return { ...s, ended: false, createdAt: at };
  }

  async findSession(tokenHash: string): Promise<SessionRecord | undefined> {
    const rows = await this.wh.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM ${TABLES.dashboardSessions} FINAL WHERE token_hash = {h:FixedString(64)} LIMIT 1`,
      { params: { h: tokenHash } },
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      tokenHash: r.token_hash,
      accountId: r.account_id,
      csrfToken: r.csrf_token,
      ended: Number(r.ended) === 1,
      createdAt: msFromCh(r.created_at),
      expiresAt: msFromCh(r.expires_at),
    };
  }

  /** End a session for good (sign-out). */
  async endSession(s: SessionRecord): Promise<void> {
    await this.wh.insert(TABLES.dashboardSessions, [
      {
        token_hash: s.tokenHash,
        account_id: s.accountId,
        csrf_token: s.csrfToken,
        ended: 1,
        created_at: chTime(s.createdAt),
        expires_at: chTime(s.expiresAt),
        updated_at: chTime(Math.max(this.now(), s.createdAt + 1)),
      },
    ]);
  }
}
