// Dashboard sessions: an opaque random token in an HTTP-only, SameSite=Strict cookie (Secure
// when configured or over TLS), looked up server-side by its SHA-256 on every call, so
// signing out ends it for good. Each session has a synchronizer CSRF token that the page
// receives in JSON and sends back in the x-csrf-token header on every state-changing call;
// a cross-site page can neither read it nor (SameSite=Strict) ride the cookie.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../core/config/load-config.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { sha256Hex, type AccountRecord, type AccountStore, type SessionRecord } from '../../../warehouse/account-store.ts';
import { COOKIES_READ_MAX, CSRF_TOKEN_MAX_CHARS } from '../../../core/limits/dashboard.ts';
import { SECRET_BYTES } from '../../../core/limits/access.ts';

export const SESSION_COOKIE = 'txa_session';
export const CSRF_HEADER = 'x-csrf-token';
const COOKIE_PATH = '/dashboard';

export interface DashboardCaller {
  session: SessionRecord;
  account: AccountRecord;
}

/** The value of one cookie from a Cookie header, or undefined. Bounded: a header of
 *  thousands of cookies is read only as far as needed, and values have a fixed shape. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';', COOKIES_READ_MAX)) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : undefined;
  }
  return undefined;
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export class Sessions {
  constructor(
    private readonly accounts: AccountStore,
    private readonly config: Config['dashboard'],
    private readonly now: () => number,
  ) {}

  private cookie(req: FastifyRequest, value: string, maxAgeSeconds: number): string {
    const secure = this.config.cookieSecure || req.protocol === 'https';
    return `${SESSION_COOKIE}=${value}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  }

  /** Start a session for `account` (sign-up, sign-in): sets the cookie, returns the CSRF token. */
  async start(req: FastifyRequest, reply: FastifyReply, account: AccountRecord): Promise<string> {
    const token = randomBytes(SECRET_BYTES).toString('base64url');
    const csrfToken = randomBytes(SECRET_BYTES).toString('base64url');
    const expiresAt = this.now() + this.config.sessionTtlMs;
    await this.accounts.createSession({ tokenHash: sha256Hex(token), accountId: account.id, csrfToken, expiresAt });
    reply.header('set-cookie', this.cookie(req, token, Math.floor(this.config.sessionTtlMs / 1000)));
    return csrfToken;
  }

  /** Forget the cookie in the browser (sign-out, or a cookie that names no live session). */
  clearCookie(req: FastifyRequest, reply: FastifyReply): void {
    reply.header('set-cookie', this.cookie(req, '', 0));
  }

  /** The caller's live session and account, or undefined with the reason. */
  async lookup(req: FastifyRequest): Promise<{ caller?: DashboardCaller; problem?: AppError }> {
    const token = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (token === undefined) return { problem: new AppError(Errors.unauthorized, 'Sign in first: this call needs a dashboard session') };
    const session = await this.accounts.findSession(sha256Hex(token));
    if (session === undefined || session.ended) {
      return { problem: new AppError(Errors.unauthorized, 'Your session has ended; sign in again') };
    }
    if (session.expiresAt <= this.now()) {
      return { problem: new AppError(Errors.unauthorized, 'Your session has expired; sign in again') };
    }
    const account = await this.accounts.get(session.accountId);
    if (account === undefined || account.status !== 'active') {
      return { problem: new AppError(Errors.forbidden, 'This account is disabled; contact the operator') };
    }
    return { caller: { session, account } };
  }

  /** The caller, or the 401/403 that says why not. */
  async require(req: FastifyRequest): Promise<DashboardCaller> {
    const { caller, problem } = await this.lookup(req);
    if (caller === undefined) throw problem!;
    return caller;
  }

  /** The caller of a state-changing call: a session and its current CSRF token. */
  async requireWithCsrf(req: FastifyRequest): Promise<DashboardCaller> {
    checkOrigin(req);
    const caller = await this.require(req);
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || sent.length > CSRF_TOKEN_MAX_CHARS || !sameSecret(sent, caller.session.csrfToken)) {
      throw new AppError(Errors.forbidden, "The page's security token is missing or stale (signed in elsewhere or out?); reload the page and try again");
    }
    return caller;
  }

  async end(caller: DashboardCaller): Promise<void> {
    await this.accounts.endSession(caller.session);
  }
}

/**
 * A state-changing call sent by a page of another site is refused when the browser names
 * that site (Origin), whatever else it carries: defence in depth beside SameSite=Strict and
 * the CSRF token (sign-in and sign-up have no session yet, so this and the JSON-only body,
 * which a cross-site form cannot send without a CORS preflight nobody answers, guard them).
 */
export function checkOrigin(req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  // Compared as URL hosts, so a default port written or not makes no difference.
  const hostOf = (u: string): string | undefined => {
    try {
      return new URL(u).host;
    } catch {
      return undefined;
    }
  };
  const from = hostOf(origin);
  const own = hostOf(`${req.protocol}://${req.headers.host ?? ''}`);
  if (from === undefined || from !== own) {
    throw new AppError(Errors.forbidden, 'Cross-site request refused: the dashboard accepts calls only from its own pages');
  }
}
