/**
 * Around every stage: admission. It counts the requests inside the pipeline and lets one piece of
 * work run while no other request does — a snapshot restore replaces the whole store under every
 * backend, so no request may see half of the old caches and half of the new store, and no write
 * may land in the old store after it was replaced. New requests wait (as Vault's wait on its state
 * lock); they are not refused.
 */
export class Admission {
  private active = 0;
  /** Set while exclusive work runs: new requests wait for it. */
  private paused: Promise<void> | undefined;
  /** Resolves the wait of exclusive work for the requests in flight. */
  private drained: (() => void) | undefined;
  /** Exclusive work runs one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * A request comes in: at once (undefined) unless exclusive work runs, and then a promise that
   * resolves once it may. Not an async function, so the usual case costs every request no turn.
   */
  enter(): Promise<void> | undefined {
    if (!this.paused) {
      this.active++;
      return undefined;
    }
    return this.enterLater();
  }

  private async enterLater(): Promise<void> {
    while (this.paused) await this.paused;
    this.active++;
  }

  /** A request is done. */
  leave(): void {
    this.active--;
    if (this.active === 0) this.drained?.();
  }

  /**
   * Runs `work` once every other request has finished, holding new ones back until it is done.
   * Called from inside a request, which stops counting itself while it waits (two restores at
   * once would otherwise each wait for the other).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.leave();
    const run = this.queue.then(() => this.runAlone(work));
    this.queue = run.catch(() => undefined);
    return run.finally(() => this.active++);
  }

  private async runAlone<T>(work: () => Promise<T>): Promise<T> {
    let resume!: () => void;
    this.paused = new Promise((resolve) => (resume = resolve));
    try {
      if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      return await work();
    } finally {
      this.paused = undefined;
      resume();
    }
  }
}
