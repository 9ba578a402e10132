// A counter bumped whenever new rows land, so caches of aggregates can tell that what they
// hold may be stale without asking the warehouse.
export class DataVersion {
  private value = 0;
  private readonly listeners = new Set<(v: number) => void>();

  get current(): number {
    return this.value;
  }

  bump(): void {
    this.value += 1;
    for (const l of this.listeners) l(this.value);
  }

  onChange(listener: (v: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
