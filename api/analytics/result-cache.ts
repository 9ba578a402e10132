// A small cache for aggregate answers. An entry is valid while no new data has landed in
// this process (DataVersion) and for at most ttlMs, which bounds staleness when another
// process (a separate ingest in server mode) writes the data.
import type { DataVersion } from '../../views/data-version.ts';

interface Entry {
  version: number;
  at: number;
  value: Promise<unknown>;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly dataVersion: DataVersion,
    private readonly ttlMs = 2000,
    private readonly maxEntries = 5000,
  ) {}

  get<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.version === this.dataVersion.current && now - hit.at < this.ttlMs) return hit.value as Promise<T>;
    const value = compute();
    // Concurrent callers share the one in-flight computation; failures are not cached.
    this.entries.set(key, { version: this.dataVersion.current, at: now, value });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
