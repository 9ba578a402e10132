// Hostile corpus for the dashboard (test/fixtures/hostile-dashboard.json): sign-up and
// sign-in bodies, cookies, CSRF tokens, key names and environments, ids, usage parameters
// and file paths. Each case gets the status it lists, never a 5xx or a stack trace, every
// error is exactly {error, message} with its status's title, and nothing is half-created:
// afterwards the corpus account holds no key and, beside the account kept one key short of
// the cap for the concurrent cases, is the only account.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_TITLES } from '../../core/errors.ts';
import { KEYS_PER_ACCOUNT_MAX } from '../../core/limits/dashboard.ts';
import { call, signUp, type DashboardSession } from '../support/dashboard-session.ts';
import { startApp } from '../support/services.ts';

type Body = string | { json: unknown } | { repeat: string; times: number; prefix?: string; suffix?: string };
type SessionMode = 'none' | 'valid' | 'no-csrf' | 'wrong-csrf' | 'huge-csrf' | 'valid-cookie-second' | 'one-key-short';

interface Case {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  session: SessionMode;
  headers?: Record<string, string>;
  contentType?: string;
  body?: Body;
  status: number;
  message?: string;
  /** Sent this many times at once; `creates` of them may be answered 201, the rest `status`. */
  concurrent?: number;
  creates?: number;
}

const cases = (JSON.parse(readFileSync(new URL('../fixtures/hostile-dashboard.json', import.meta.url), 'utf8')) as { cases: Case[] }).cases;

let t: Awaited<ReturnType<typeof startApp>>;
let s: DashboardSession;
/** An account holding one key less than the cap (session one-key-short). */
let short: DashboardSession;

beforeAll(async () => {
  t = await startApp();
  s = await signUp(t.app, 'corpus@example.com');
  short = await signUp(t.app, 'one-key-short@example.com');
  for (let i = 1; i < KEYS_PER_ACCOUNT_MAX; i++) {
    expect((await call(t.app, short, 'POST', '/dashboard/api/keys', { name: `k${i}` })).statusCode).toBe(201);
  }
});
afterAll(async () => t?.cleanup());

function payloadOf(body: Body | undefined): { payload?: string; contentType?: string } {
  if (body === undefined) return {};
  if (typeof body === 'string') return { payload: body };
  if ('json' in body) return { payload: JSON.stringify(body.json), contentType: 'application/json' };
  return { payload: `${body.prefix ?? ''}${body.repeat.repeat(body.times)}${body.suffix ?? ''}` };
}

function sessionHeaders(mode: SessionMode): Record<string, string> {
  switch (mode) {
    case 'none':
      return {};
    case 'valid':
      return { cookie: s.cookie, 'x-csrf-token': s.csrf };
    case 'no-csrf':
      return { cookie: s.cookie };
    case 'wrong-csrf':
      return { cookie: s.cookie, 'x-csrf-token': `${s.csrf.slice(0, -1)}${s.csrf.endsWith('A') ? 'B' : 'A'}` };
    case 'huge-csrf':
      return { cookie: s.cookie, 'x-csrf-token': 'A'.repeat(10_000) };
    case 'valid-cookie-second':
      return { cookie: `txa_session=garbage; ${s.cookie}` };
    case 'one-key-short':
      return { cookie: short.cookie, 'x-csrf-token': short.csrf };
  }
}

describe('hostile dashboard requests (fixtures/hostile-dashboard.json)', () => {
  it('has a real corpus', () => {
    expect(cases.length).toBeGreaterThanOrEqual(90);
  });

  it.each(cases.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const { payload, contentType } = payloadOf(c.body);
    const headers: Record<string, string> = { ...sessionHeaders(c.session), ...c.headers };
    const type = c.contentType ?? contentType;
    if (type !== undefined) headers['content-type'] = type;
    const send = () =>
      t.app.inject({
        method: c.method,
        url: c.url,
        headers,
        remoteAddress: `10.77.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        ...(payload === undefined ? {} : { payload }),
      });
    if (c.concurrent !== undefined) {
      const all = await Promise.all(Array.from({ length: c.concurrent }, send));
      const created = all.filter((r) => r.statusCode === 201).length;
      expect(created, 'answered 201').toBe(c.creates ?? 0);
      for (const r of all) if (r.statusCode !== 201) expect(r.statusCode, r.body).toBe(c.status);
      if (c.session === 'one-key-short') {
        const held = (await t.services.access.keys.listByAccount(short.accountId)).filter((k) => k.status !== 'revoked');
        expect(held.length).toBeLessThanOrEqual(KEYS_PER_ACCOUNT_MAX);
      }
      return;
    }
    const res = await send();
    expect(res.statusCode, res.body).toBe(c.status);
    expect(res.body).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|\/work\/|DB::Exception|Code: \d+|scrypt\$/);
    if (c.status >= 400) {
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      expect(body.error).toBe(HTTP_TITLES[c.status]);
      if (c.message !== undefined) expect(body.message).toContain(c.message);
    }
    // Only the corpus's own sign-up ever sets a session cookie.
    expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/txa_session=[A-Za-z0-9_-]{43}/);
  });

  it('created nothing: one account, no keys', async () => {
    const accounts = await t.services.accounts.list();
    expect(accounts.map((a) => a.email).sort()).toEqual(['corpus@example.com', 'one-key-short@example.com']);
    expect(await t.services.access.keys.listByAccount(s.accountId)).toEqual([]);
  });
});
