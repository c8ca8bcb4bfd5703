/**
 * One lock per key: a read-check-write of one stored record runs alone, so two requests at the
 * same moment can never both read the old record and overwrite each other's change (the cloud
 * auth method's access-list entries, a kv secret's metadata). In-process only, like the mount it
 * belongs to: on an HA cluster every write runs on the active node.
 */
export class KeyedLock {
  /** The tail of each key's queue; dropped when the last holder releases. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` once every earlier holder of `key` has finished. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys held or waited for right now (tests check that nothing leaks). */
  get size(): number {
    return this.tails.size;
  }
}
