// Keyset pagination tokens: base64url of a JSON array [tag, ...position, fingerprint, mac].
// A token is client input like any other: it is decoded strictly (each element's type and
// range, and canonical spelling), it is bound to the listing it came from (method tag,
// filters, sort order) by a fingerprint, so a token of other filters is refused with a
// message saying so, and it carries a MAC over all of that under a server secret, so a
// token the service did not write (a forged position, an edited element) is refused too.
// The key is the codec's (PageTokens), built once by services.ts: no module-wide secret.
//
// A token names a position (a record, a group), never a way to go: the same edge cursor
// resumes forwards (after it) or backwards (before it), as Relay's connections expect. The
// direction is the page's, given at decode time: it picks the word an error names the token
// by (GraphQL's pagination.after or pagination.before), and scanOrder turns it and the
// listing's order into the order a page is read in.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, Errors, param, type ParamKey } from '../../../core/errors.ts';
import { LISTING_FINGERPRINT_CHARS, PAGE_TOKEN_MAC_CHARS, PAGE_TOKEN_MAX_CHARS } from '../../../core/limits/questions.ts';

/** Which way a page goes from its token: forward (after it, the listing's order) or backward (before it). */
export type PageDirection = 'forward' | 'backward';

/** The order a page is read in: the listing's own order forwards, the reverse backwards (the page is then turned back). */
export const scanOrder = (order: 'asc' | 'desc', direction: PageDirection = 'forward'): 'asc' | 'desc' =>
  direction === 'forward' ? order : order === 'asc' ? 'desc' : 'asc';

/** The logical parameter a token arrived in: the cursor to page after, or the one to page before. */
const tokenParam = (direction: PageDirection): ParamKey => (direction === 'forward' ? 'cursor' : 'cursorBefore');

/** JSON with object keys sorted and list filters sorted: equal filters, equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) {
    const items = v.map(canonical);
    return `[${items.every((x) => x.startsWith('"')) ? items.sort().join(',') : items.join(',')}]`;
  }
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A short digest of what a listing was asked for (not limit: pages may differ in size). */
export function listingFingerprint(what: unknown): string {
  return createHash('sha256').update(canonical(what)).digest('base64url').slice(0, LISTING_FINGERPRINT_CHARS);
}

/**
 * A record listing's filters as its tokens' fingerprints hash them: the range of block times
 * under its former key `blockTime`. A fingerprint hashes key names, and a token issued before
 * the filter was named `range` (by an older deploy, a replica not yet rolled) must still resume.
 */
export const fingerprintedFilters = <F extends { range?: unknown }>({ range, ...f }: F): Omit<F, 'range'> & { blockTime?: F['range'] } =>
  range === undefined ? f : { ...f, blockTime: range };

const malformed = (key: ParamKey): AppError =>
  new AppError(Errors.invalidParams, `${param(key)} is not a pagination token this method issued; pass back the ${param(key)} of the previous page unchanged`, {
    field: key,
  });

/**
 * The codec of pagination tokens under one MAC key. Every replica must use the same key for
 * a token to page on whichever answers next, so services build it once from a shared secret
 * (the operator token) and hand it to every listing that issues or reads tokens.
 */
export class PageTokens {
  private readonly key: Buffer;

  constructor(shared: string) {
    this.key = createHash('sha256').update(`page-token:${shared}`).digest();
  }

  private macOf(parts: readonly unknown[]): string {
    return createHmac('sha256', this.key).update(JSON.stringify(parts)).digest('base64url').slice(0, PAGE_TOKEN_MAC_CHARS);
  }

  encode(parts: readonly unknown[]): string {
    return Buffer.from(JSON.stringify([...parts, this.macOf(parts)])).toString('base64url');
  }

  /**
   * Decode a token: `read` checks the position elements (everything between the tag and the
   * fingerprint) and returns the position, or undefined when any is malformed. `direction`
   * is the page's (errors name the token as the argument it came in).
   */
  decode<T>(token: string, tag: string, fingerprint: string, read: (position: unknown[]) => T | undefined, direction: PageDirection = 'forward'): T {
    const key = tokenParam(direction);
    // Bounded before anything is decoded, whichever door let it in.
    if (token.length === 0 || token.length > PAGE_TOKEN_MAX_CHARS) throw malformed(key);
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      throw malformed(key);
    }
    if (!Array.isArray(v) || v.length < 4 || v[0] !== tag || typeof v.at(-1) !== 'string' || typeof v.at(-2) !== 'string') throw malformed(key);
    const parts = v.slice(0, -1);
    const position = read(v.slice(1, -2));
    // Canonical spelling only (no padding, extra spaces, 1.0 for 1 …): the token must be
    // exactly what encode writes for what it holds.
    if (position === undefined || Buffer.from(JSON.stringify(v)).toString('base64url') !== token) throw malformed(key);
    const mac = Buffer.from(String(v.at(-1)));
    const expected = Buffer.from(this.macOf(parts));
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw malformed(key);
    if (parts.at(-1) !== fingerprint) {
      throw new AppError(
        Errors.invalidParams,
        `${param(key)} belongs to a listing with other filters or another ${param('order')}; ` +
          `send the same filters and ${param('order')} as for the first page, or start again without a token`,
        { field: key },
      );
    }
    return position;
  }
}

/** Element checks shared by the listings. */
export const isUInt = (v: unknown, max: number): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;
