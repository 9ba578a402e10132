// Identical reads in flight at the same time share one engine query. The embedded engine runs
// one query at a time, so 50 clients asking for the same page (the newest records of a hot
// address, polled) would otherwise queue 50 identical reads. Nothing is kept after a read
// ends: a request arriving later starts a new one, so no answer is older than the request
// that received it by more than one read's duration, and the key carries the data version,
// so a request made after a write in this process never joins a read started before it.
export class SharedReads {
  private readonly flights = new Map<string, Promise<unknown>>();

  run<T>(key: string, read: () => Promise<T>): Promise<T> {
    const flying = this.flights.get(key);
    if (flying) return flying as Promise<T>;
    const p = read().finally(() => {
      if (this.flights.get(key) === p) this.flights.delete(key);
    });
    this.flights.set(key, p);
    return p;
  }

  /** Reads in flight (tests). */
  get size(): number {
    return this.flights.size;
  }
}
