// Resolves a presented secret to its key record, through a cache so that a request
// costs no warehouse query. An entry is trusted for at most ttlMs (config: under one
// second), which bounds how long a revoked key keeps working on any process; with Redis,
// a change made through any process also clears every process's cache at once.
import { hashSecret, type ApiKeyRecord, type ApiKeyStore } from '../../views/api-key-store.ts';

interface Entry {
  at: number;
  value: Promise<ApiKeyRecord | undefined>;
}

export class KeyAuthenticator {
  // Keyed by the secret's hash, so no secret sits in memory longer than a request.
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly store: ApiKeyStore,
    private readonly ttlMs: number,
    // Unknown secrets are cached too (a guessing client costs no queries), so the map is
    // bounded: the oldest entries go first.
    private readonly maxEntries = 10_000,
  ) {}

  /** The key record for `secret` whatever its status, or undefined when no key has it. */
  lookup(secret: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashSecret(secret);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    // Concurrent requests with the same key share one lookup; a failed lookup is not kept.
    const value = this.store.findBySecret(secret);
    this.cache.delete(hash);
    this.cache.set(hash, { at: now, value });
    value.catch(() => this.cache.delete(hash));
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return value;
  }

  /** Forget every cached lookup (a key changed somewhere). */
  invalidate(): void {
    this.cache.clear();
  }
}
