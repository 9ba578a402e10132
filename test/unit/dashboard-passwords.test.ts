// Password hashing (api/doors/dashboard/passwords.ts) and the dashboard's configuration, without an
// engine: scrypt with a salt per password and its parameters in the stored form; stored
// values this code would not write are refused rather than run; the rule's edges.
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblem, SCRYPT_PARAMS, verifyPassword } from '../../api/doors/dashboard/passwords.ts';
import { ConfigError, loadConfig } from '../../core/config/load-config.ts';

describe('dashboard passwords', () => {
  it('hashes with a salt per password and verifies only the right password', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    expect(a).not.toBe(b);
    expect(a.split('$').slice(0, 4)).toEqual(['scrypt', String(SCRYPT_PARAMS.N), String(SCRYPT_PARAMS.r), String(SCRYPT_PARAMS.p)]);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    // Unicode is normalised (NFC) before hashing: the same password typed either way.
    const composed = await hashPassword('caf\u00e9 au lait please');
    expect(await verifyPassword('cafe\u0301 au lait please', composed)).toBe(true);
  });

  it('refuses malformed stored values and parameters that would cost too much', async () => {
    const good = await hashPassword('correct horse battery');
    const [, , , , salt, key] = good.split('$');
    for (const stored of [
      '',
      'plain',
      `bcrypt$10$${salt}$${key}`,
      `scrypt$1048577$8$1$${salt}$${key}`,
      `scrypt$4194304$8$1$${salt}$${key}`,
      `scrypt$32768$64$1$${salt}$${key}`,
      `scrypt$1048576$8$1$${salt}$${key}`,
      `scrypt$32767$8$1$${salt}$${key}`,
      `scrypt$32768$8$1$${salt}$`,
    ]) {
      expect(await verifyPassword('correct horse battery', stored), stored).toBe(false);
    }
  });

  it('states the rule: 12 to 256 characters, counted as characters', () => {
    expect(passwordProblem('a'.repeat(11))).toContain('too short');
    expect(passwordProblem('a'.repeat(12))).toBeUndefined();
    expect(passwordProblem('\u{1F600}'.repeat(12))).toBeUndefined();
    expect(passwordProblem('a'.repeat(257))).toContain('too long');
    expect(passwordProblem(12345678901234)).toContain('must be a string');
  });
});

describe('dashboard configuration', () => {
  it('has safe defaults and refuses bad values all at once', () => {
    expect(loadConfig({}).dashboard).toEqual({
      signup: 'open',
      sessionTtlMs: 12 * 3_600_000,
      cookieSecure: false,
      signinFailuresPerAccount: 10,
      signinAttemptsPerAddress: 30,
    });
    expect(loadConfig({ DASHBOARD_SIGNUP: 'INVITE', SESSION_COOKIE_SECURE: 'true' }).dashboard).toMatchObject({ signup: 'invite', cookieSecure: true });
    let err: unknown;
    try {
      loadConfig({ DASHBOARD_SIGNUP: 'closed', SESSION_TTL_HOURS: '0', SIGNIN_FAILURES_PER_ACCOUNT: 'x' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'DASHBOARD_SIGNUP must be open or invite, got "closed"',
      'SESSION_TTL_HOURS must be between 1 and 720, got 0',
      'SIGNIN_FAILURES_PER_ACCOUNT must be an integer, got "x"',
    ]);
  });
});
