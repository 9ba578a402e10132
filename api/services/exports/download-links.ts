// Signed download links, in the pre-signed URL style: the link's path names the job and the
// file, its query the key it was minted for, its expiry (Unix seconds) and a MAC over all
// four under a key derived from the operator token (replicas share it, as for pagination
// tokens). The download route checks that the key is still active, so revoking a key stops
// its links at once, whatever their expiry.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Where signed links are served (export-routes.ts): the link is the credential, checked by its
 *  route (MAC, expiry, and the issuing key still active), so the route needs no API key. */
export const SIGNED_LINK_PREFIX = '/v1/exports/links/';

/** A link's expiry as minted: Unix seconds in decimal digits. */
export const LINK_EXPIRES_PATTERN = '^[0-9]{1,12}$';
/** A link's signature as minted: an HMAC-SHA256, base64url without padding (43 characters). */
export const LINK_SIG_PATTERN = '^[A-Za-z0-9_-]{43}$';
const EXPIRES = new RegExp(LINK_EXPIRES_PATTERN);

export interface LinkClaims {
  job: string;
  file: string;
  key: string;
  /** Unix seconds. */
  expires: number;
}

export class DownloadLinks {
  private readonly secret: Buffer;

  constructor(sharedSecret: string) {
    this.secret = createHash('sha256').update(`export-link:${sharedSecret}`).digest();
  }

  private mac(c: LinkClaims): string {
    return createHmac('sha256', this.secret)
      .update(JSON.stringify([c.job, c.file, c.key, c.expires]))
      .digest('base64url');
  }

  /** The link's path and query below `prefix`. */
  mint(prefix: string, claims: LinkClaims): string {
    const q = new URLSearchParams({ key: claims.key, expires: String(claims.expires), sig: this.mac(claims) });
    return `${prefix}${encodeURIComponent(claims.job)}/${encodeURIComponent(claims.file)}?${q.toString()}`;
  }

  /** The claims of a link this service minted, or undefined (forged, edited, malformed). Expiry is the caller's check. */
  read(job: string, file: string, query: Record<string, unknown>): LinkClaims | undefined {
    const { key, expires, sig } = query;
    if (typeof key !== 'string' || typeof sig !== 'string' || typeof expires !== 'string' || !EXPIRES.test(expires)) return undefined;
    const claims = { job, file, key, expires: Number(expires) };
    const given = Buffer.from(sig);
    const expected = Buffer.from(this.mac(claims));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return claims;
  }
}
