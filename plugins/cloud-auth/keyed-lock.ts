/**
 * One lock per key (an instance ID): a read-check-write of that key's access-list entry runs
 * alone, so two logins of one instance at the same moment can never both see "no entry" and
 * overwrite each other. In-process only, like the mount it belongs to.
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
