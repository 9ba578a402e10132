// One paid call in flight per payer (docs/x402.md; security review 2026-11, x402 door,
// finding 7). Verification simulates a payment alone and holds none of the payer's funds, so
// payments over the same funds sent at once all verified and all ran, and only one could be
// settled. A payer's calls therefore take turns, from verification to settlement: a call that
// waited is verified again once the one before it settled, and a payment whose funds that
// one spent is refused there, before anything of it runs.

export class PayerTurns {
  /** The end of each payer's last turn taken (gone once no call holds or waits for one). */
  private readonly tails = new Map<string, Promise<void>>();

  /** Whether a call holds or waits for `payer`'s turn. */
  busy(payer: string): boolean {
    return this.tails.has(payer);
  }

  /** Wait for `payer`'s turn: its release (idempotent), and whether another call held it first. */
  async take(payer: string): Promise<{ release: () => void; waited: boolean }> {
    const before = this.tails.get(payer);
    let end!: () => void;
    const mine = new Promise<void>((r) => (end = r));
    const tail = (before ?? Promise.resolve()).then(() => mine);
    this.tails.set(payer, tail);
    void tail.then(() => {
      if (this.tails.get(payer) === tail) this.tails.delete(payer);
    });
    if (before !== undefined) await before;
    return { release: once(end), waited: before !== undefined };
  }
}

/**
 * The payers' turns one request holds, released when it is answered: an MCP POST pays each of
 * its tool calls and verifies every payment before any runs, so one payer's second payment in
 * it must not wait for a turn its own POST holds.
 */
export class HeldTurns {
  readonly byPayer = new Map<string, () => void>();

  releaseAll(): void {
    for (const release of this.byPayer.values()) release();
    this.byPayer.clear();
  }
}

export function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}
