// Round-robin between the keys of one plan for heavy work (SQL sessions, api/services/sql/concurrency-gate.ts;
// export workers, api/services/exports/export-scheduler.ts): the key whose last turn is the oldest, or
// that never had one, goes first, so a key with a queue gets one turn before any key of its
// plan gets its second, and one key's queue holds another key back for at most one job's turn.
// Turns are counted, not timed: the order is the same on a loaded machine.

/** When each key last got a slot, as a count of slots handed out. */
export class KeyTurns {
  private counter = 0;
  private readonly last = new Map<string, number>();

  /** `key` got a slot now. */
  took(key: string): void {
    this.last.set(key, ++this.counter);
  }

  /** When `key` last got a slot; -1 when it never did (or that was forgotten: see forgetIdle). */
  of(key: string): number {
    return this.last.get(key) ?? -1;
  }

  /** Keys remembered, for tests. */
  size(): number {
    return this.last.size;
  }

  /**
   * Forget the turns of idle keys (nothing running or waiting) that came before every busy
   * key's: such a key, back later as "never had a turn", is still ordered before every key it
   * came before, so forgetting changes no order. What is kept is bounded by the keys served
   * since the oldest turn among busy keys.
   */
  forgetIdle(busyKeys: Iterable<string>): void {
    const busy = new Set(busyKeys);
    let floor = Infinity;
    for (const k of busy) {
      const t = this.last.get(k);
      if (t !== undefined && t < floor) floor = t;
    }
    for (const [k, t] of this.last) if (t < floor && !busy.has(k)) this.last.delete(k);
  }
}
