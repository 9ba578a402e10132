// Dashboard sessions for app.inject() tests: sign up or in through the real calls, keep the
// cookie and the CSRF token, and send both on later calls.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface DashboardSession {
  cookie: string;
  csrf: string;
  accountId: string;
}

/** The `name=value` part of the session cookie an answer sets ('' when it clears it). */
export function sessionCookie(res: LightMyRequestResponse): string | undefined {
  const raw = res.headers['set-cookie'];
  const all = Array.isArray(raw) ? raw : raw === undefined ? [] : [String(raw)];
  const c = all.find((s) => s.startsWith('txa_session='));
  return c?.split(';')[0];
}

export async function signUp(
  app: FastifyInstance,
  email: string,
  password = 'correct horse battery',
  extra: Record<string, unknown> = {},
): Promise<DashboardSession> {
  const res = await app.inject({ method: 'POST', url: '/dashboard/api/signup', payload: { email, password, ...extra } });
  if (res.statusCode !== 201) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
  return { cookie: sessionCookie(res)!, csrf: res.json().csrfToken, accountId: res.json().account.id };
}

export async function signIn(app: FastifyInstance, email: string, password = 'correct horse battery', remoteAddress = '127.0.0.1'): Promise<DashboardSession> {
  const res = await app.inject({ method: 'POST', url: '/dashboard/api/signin', payload: { email, password }, remoteAddress });
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
  return { cookie: sessionCookie(res)!, csrf: res.json().csrfToken, accountId: res.json().account.id };
}

/** A dashboard call with the session's cookie and (for POST) its CSRF token. */
export function call(app: FastifyInstance, s: DashboardSession, method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method,
    url,
    headers: { cookie: s.cookie, ...(method === 'POST' ? { 'x-csrf-token': s.csrf } : {}), ...headers },
    ...(method === 'POST' ? { payload: (payload ?? {}) as object } : {}),
  });
}
