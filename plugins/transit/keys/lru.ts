/**
 * The policy cache: unbounded (size 0) or least-recently-used with a fixed size (≥ 10). A Map keeps
 * insertion order, so moving an entry to the end on access makes the first entry the LRU one.
 * Hand-written: twenty lines, and the npm LRU packages bring far more than this needs.
 */
export class PolicyCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(readonly size: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined && this.size > 0) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.size > 0) {
      while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get count(): number {
    return this.entries.size;
  }
}
