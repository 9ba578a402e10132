// Allow-list checks of what the dashboard's calls and the operator's account routes take
// (one definition for both interfaces, so neither imports the other):
// emails, key names, environment labels. Each refusal says the rule.
import { invalidParams } from '../errors.ts';
import { EMAIL_MAX_LENGTH, KEY_ENVIRONMENT_MAX_LENGTH, KEY_NAME_MAX_LENGTH } from '../limits/dashboard.ts';

/** The environment labels the page offers; any other short label is accepted too. */
export const ENVIRONMENTS = ['production', 'staging', 'development'] as const;

// C0/C1 controls, bidirectional overrides and zero-width characters: never part of a name,
// and the way to make a listing lie about what it shows.
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

/** A JSON object body, or a 400 naming the expected shape. */
export function objectBody(body: unknown, shape: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidParams(`the body must be a JSON object ${shape}`);
  return body as Record<string, unknown>;
}

/** A normalised email address (NFKC, trimmed, lower-case), or a 400. A plain shape check:
 *  the address is an identifier here, never mailed. NFKC: a full-width or composed spelling
 *  of an address is the same account, not a look-alike second one. */
export function parseEmail(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalidParams('email is required', 'email');
  const email = v.normalize('NFKC').trim().toLowerCase();
  if (email.length > EMAIL_MAX_LENGTH) throw invalidParams(`email must be at most ${EMAIL_MAX_LENGTH} characters`, 'email');
  if (INVISIBLE.test(email) || !/^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/u.test(email)) {
    throw invalidParams('email must be an address such as name@example.com', 'email');
  }
  return email;
}

export function parseKeyName(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalidParams('name is required: a label to recognise the key by', 'name');
  const name = v.trim();
  if ([...name].length > KEY_NAME_MAX_LENGTH) throw invalidParams(`name must be at most ${KEY_NAME_MAX_LENGTH} characters`, 'name');
  if (INVISIBLE.test(name)) throw invalidParams('name must not contain control or invisible characters', 'name');
  return name;
}

export function parseEnvironment(v: unknown): string {
  if (v === undefined || v === null || v === '') return ENVIRONMENTS[0];
  if (typeof v !== 'string') throw invalidParams(`environment must be ${ENVIRONMENTS.join(', ')} or a short label`, 'environment');
  const env = v.trim();
  if (!new RegExp(`^[\\p{L}\\p{N}][\\p{L}\\p{N} ._-]{0,${KEY_ENVIRONMENT_MAX_LENGTH - 1}}$`, 'u').test(env)) {
    throw invalidParams(
      `environment must be ${ENVIRONMENTS.join(', ')} or a label of 1-${KEY_ENVIRONMENT_MAX_LENGTH} letters, digits, spaces, ".", "_" or "-"`,
      'environment',
    );
  }
  return env;
}
