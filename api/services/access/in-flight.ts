// Requests in flight per API key, counted in this process (the engine a request loads is
// this process's, or one ClickHouse server shared by replicas that each cap their own).
// A slot is taken when a request is admitted and given back exactly once by the release
// function it comes with, however many times that is called.

export class InFlightLimiter {
  private readonly counts = new Map<string, number>();

  /** Take one of `subject`'s `cap` slots: its release function, or undefined when all are taken. */
  tryAcquire(subject: string, cap: number): (() => void) | undefined {
    const used = this.counts.get(subject) ?? 0;
    if (used >= cap) return undefined;
    this.counts.set(subject, used + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(subject) ?? 1) - 1;
      // Idle subjects are dropped, so the map holds only keys with requests in flight.
      if (left <= 0) this.counts.delete(subject);
      else this.counts.set(subject, left);
    };
  }

  /** Requests of `subject` in flight now. */
  inFlight(subject: string): number {
    return this.counts.get(subject) ?? 0;
  }

  /** Requests in flight now, all subjects together. */
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
}
