// Password hashing for dashboard accounts: scrypt from node:crypto with a random 16-byte
// salt per password. Parameters (docs/dashboard.md): N = 2^15, r = 8, p = 1, 64-byte key;
// that is 32 MiB of memory and about 100 ms of one core per hash on the 2-core test
// machine, run on libuv's thread pool so the event loop keeps serving. The stored form is
// "scrypt$N$r$p$salt$hash" (base64url), so the parameters can be raised later: old hashes
// still verify with the parameters they were made with.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, SCRYPT_BOUNDS, SCRYPT_PARAMS } from '../../../core/limits/dashboard.ts';
import { SECRET_BYTES } from '../../../core/limits/access.ts';

export { SCRYPT_PARAMS };

/** The password rule as the sign-up page and the API's 400 state it. */
export const PASSWORD_RULE = `a password of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`;

/** Why a password is refused, or undefined when it follows the rule. */
export function passwordProblem(password: unknown): string | undefined {
  if (typeof password !== 'string') return `password must be a string: ${PASSWORD_RULE}`;
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `password is too short: use ${PASSWORD_RULE} (a few unrelated words make a good one)`;
  if (length > PASSWORD_MAX_LENGTH) return `password is too long: use ${PASSWORD_RULE}`;
  return undefined;
}

function derive(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // maxmem: scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is exactly that at
  // these parameters, so leave room.
  const options: ScryptOptions = { N, r, p, maxmem: SCRYPT_BOUNDS.headroom * SCRYPT_BOUNDS.bytesPerNr * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltBytes } = SCRYPT_PARAMS;
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, N, r, p, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const STORED = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{8,128})\$([A-Za-z0-9_-]{16,256})$/;

/** Whether `password` matches a stored hash; false for a malformed or empty one. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Only parameters this code would write (or weaker ones within reason) are run: a stored
  // value cannot make a sign-in allocate more than 64 MiB or run for minutes.
  if (
    N < 2 ||
    N > SCRYPT_BOUNDS.maxN ||
    (N & (N - 1)) !== 0 ||
    r < 1 ||
    r > SCRYPT_BOUNDS.maxR ||
    p < 1 ||
    p > SCRYPT_BOUNDS.maxP ||
    SCRYPT_BOUNDS.bytesPerNr * N * r > SCRYPT_BOUNDS.maxMemoryBytes
  )
    return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), N, r, p, expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash no password matches, verified when an email is unknown so that the answer takes
 *  as long as for a known one (no account enumeration by timing). The function returned
 *  makes it once, lazily, and holds it: the dashboard's routes make one. */
export function decoyHasher(): () => Promise<string> {
  let decoy: Promise<string> | undefined;
  return () => (decoy ??= hashPassword(randomBytes(SECRET_BYTES).toString('base64url')));
}
