/**
 * The primary process's side of the workers' storage (storage/ipc.ts): it owns the one physical
 * store and runs every worker's operations on it, reports each write to the other workers and
 * answers the writer only once all of them have applied it, and keeps the election lock that
 * makes one worker the active one. A worker that dies gives up what it held (the HA lock, named
 * locks), so the others carry on.
 */
import type { Logger } from 'pino';
import { KeyedLock } from '../../sdk/keyed-lock.js';
import type { BatchOp, PhysicalStorage, StoredEntry } from '../../storage/storage.js';
import type { IpcPeer } from './ipc-peer.js';

interface Holder {
  readonly worker: number;
  readonly nodeId: string;
  readonly apiAddr: string;
  readonly since: number;
  readonly epoch: number;
}

export class StoreOwner {
  /** Workers that said hello: they listen for calls, so broadcasts go to them. */
  private readonly workers = new Map<number, IpcPeer>();
  /** Every worker's channel, from its start. */
  private readonly peers = new Map<number, IpcPeer>();
  private readonly locks = new KeyedLock();
  /** Named locks held, by worker: each one's release. */
  private readonly held = new Map<number, Map<string, () => void>>();
  private holder: Holder | undefined;
  private epoch = 0;

  constructor(
    private readonly store: PhysicalStorage,
    private readonly logger: Logger,
  ) {}

  /**
   * Serves a worker's calls from now on. It takes part in broadcasts once it says hello: a
   * message sent before it listens would be lost, and the call never answered.
   */
  attach(worker: number, peer: IpcPeer): void {
    this.peers.set(worker, peer);
    peer.handle('hello', async () => {
      if (this.peers.get(worker) === peer) this.workers.set(worker, peer);
    });
    peer.handle('get', async ({ key }) => (await this.store.get(key as string)) ?? null);
    peer.handle('list', ({ prefix }) => this.store.list(prefix as string));
    peer.handle('put', async ({ key, value }) => {
      await this.store.put(key as string, value as Uint8Array);
      await this.report(worker, { keys: [key as string] });
    });
    peer.handle('delete', async ({ key }) => {
      await this.store.delete(key as string);
      await this.report(worker, { keys: [key as string] });
    });
    peer.handle('batch', async ({ ops }) => {
      const list = ops as BatchOp[];
      await this.store.batch(list);
      await this.report(worker, { keys: list.map((op) => op.key) });
    });
    peer.handle('entries', async () => {
      const all: StoredEntry[] = [];
      for await (const entry of this.store.entries()) all.push(entry);
      return all;
    });
    peer.handle('replaceAll', async ({ entries }) => {
      const list = entries as StoredEntry[];
      const count = await this.store.replaceAll((async function* () {
        yield* list;
      })());
      await this.report(worker, { resync: true });
      return count;
    });
    peer.handle('lock', ({ name }) => this.lock(worker, name as string));
    peer.handle('unlock', ({ name }) => {
      this.unlock(worker, name as string);
      return Promise.resolve();
    });
    peer.handle('haAcquire', ({ nodeId, apiAddr }) => this.acquire(worker, nodeId as string, apiAddr as string));
    peer.handle('haRelease', async ({ epoch }) => {
      if (this.holder?.worker === worker && this.holder.epoch === epoch) this.release();
    });
    peer.handle('haLeader', async () => (this.holder ? { nodeId: this.holder.nodeId, apiAddr: this.holder.apiAddr, since: this.holder.since } : null));
  }

  /** The worker exited: its calls in flight are dropped, and what it held is given up. */
  detach(worker: number, reason: string): void {
    this.peers.get(worker)?.close(reason);
    this.peers.delete(worker);
    this.workers.delete(worker);
    for (const release of this.held.get(worker)?.values() ?? []) release();
    this.held.delete(worker);
    if (this.holder?.worker === worker) {
      this.logger.warn({ worker_number: worker, reason }, 'the active worker is gone; another takes the role');
      this.release();
    }
  }

  /** Asks every worker but `except` to run `op`, and waits for all (a worker that dies meanwhile is not waited for). */
  async broadcast(except: number | undefined, op: string, args: Record<string, unknown> = {}): Promise<unknown[]> {
    const others = [...this.workers].filter(([id]) => id !== except);
    const answers = await Promise.allSettled(others.map(([, peer]) => peer.call(op, args)));
    return answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : undefined));
  }

  /** Reports a write to every other worker; the writer is answered after they applied it. */
  private async report(writer: number, change: { keys: readonly string[] } | { resync: true }): Promise<void> {
    await this.broadcast(writer, 'changed', change);
  }

  private lock(worker: number, name: string): Promise<void> {
    return new Promise<void>((granted) => {
      void this.locks.run(name, () =>
        new Promise<void>((release) => {
          // The worker died while it waited: nobody would release the lock.
          if (!this.workers.has(worker)) return release();
          const mine = this.held.get(worker) ?? new Map<string, () => void>();
          this.held.set(worker, mine);
          mine.set(name, release);
          granted();
        }),
      );
    });
  }

  private unlock(worker: number, name: string): void {
    const mine = this.held.get(worker);
    const release = mine?.get(name);
    mine?.delete(name);
    release?.();
  }

  private async acquire(worker: number, nodeId: string, apiAddr: string): Promise<number | null> {
    if (this.holder) return this.holder.worker === worker ? this.holder.epoch : null;
    this.holder = { worker, nodeId, apiAddr, since: Date.now(), epoch: ++this.epoch };
    void this.broadcast(worker, 'leader');
    return this.holder.epoch;
  }

  private release(): void {
    this.holder = undefined;
    void this.broadcast(undefined, 'leader');
  }
}
