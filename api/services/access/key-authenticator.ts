// Resolves a presented secret to its key record from an in-memory snapshot of the whole
// key table, so a request costs no warehouse query however many distinct keys callers
// use (a per-key cache expired between two uses of the same key once callers held more
// than a few hundred keys, and every request then paid for a lookup). The snapshot is
// trusted for at most ttlMs (config: under one second), which bounds how long a revoked
// key keeps working on any process; it is reloaded lazily, by one query at a time, when a
// request finds it older than that. With Redis, a change made through any process also
// marks every process's snapshot stale at once. Keys number in the thousands (migration
// 009), so a reload reads a few kilobytes. A secret missing from the snapshot is looked up
// once in the store, so a key created through another process works at once.
import { hashSecret, type ApiKeyRecord, type ApiKeyStore } from '../../../warehouse/api-key-store.ts';

interface Snapshot {
  at: number;
  keys: Map<string, ApiKeyRecord>;
}

export class KeyAuthenticator {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly ttlMs: number,
  ) {}

  /**
   * The key record for `secret` whatever its status, or undefined when no key has it.
   * `beforeStoreLookup` runs only when the secret is not in the snapshot, before the store
   * is asked; it may throw to refuse the request without that query.
   */
  async lookup(secret: string, beforeStoreLookup?: () => Promise<void>): Promise<ApiKeyRecord | undefined> {
    const snap = this.snapshot !== undefined && Date.now() - this.snapshot.at < this.ttlMs ? this.snapshot : await this.reload();
    const hash = hashSecret(secret);
    const known = snap.keys.get(hash);
    if (known !== undefined) return known;
    // A key created moments ago through another process is not in the snapshot yet: ask
    // the store, so a new key works everywhere at once. The caller checks first that the
    // address may still present unknown keys (its per-IP budget), so guessing costs at
    // most that many queries.
    await beforeStoreLookup?.();
    const found = await this.store.findBySecret(secret);
    if (found !== undefined && this.snapshot === snap) snap.keys.set(hash, found);
    return found;
  }

  /** Forget the snapshot (a key changed somewhere); the next request reloads it. */
  invalidate(): void {
    this.snapshot = undefined;
    this.loading = undefined;
  }

  private reload(): Promise<Snapshot> {
    // Concurrent requests share one reload; a failed reload is not kept.
    if (this.loading === undefined) {
      const at = Date.now();
      const loading = this.store.byHash().then(
        (keys) => {
          const snap = { at, keys };
          if (this.loading === loading) {
            this.snapshot = snap;
            this.loading = undefined;
          }
          return snap;
        },
        (err: unknown) => {
          if (this.loading === loading) this.loading = undefined;
          throw err;
        },
      );
      this.loading = loading;
    }
    return this.loading;
  }
}
