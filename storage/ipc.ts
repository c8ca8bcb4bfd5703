/**
 * A worker's physical store when `keywarden server` runs several workers: the primary process
 * owns the real store (LevelDB stays single-writer) and answers each operation over the cluster
 * IPC channel (core/cluster/store-owner.ts). To the host it is a shared store, as PostgreSQL is
 * with HA: the workers are the nodes, the primary's lock elects the active one, and the change
 * feed invalidates the other workers' caches.
 *
 * The primary answers a write only once every other worker has applied the change it reported,
 * so a write acknowledged by a worker is already visible on the others. On PostgreSQL the other
 * nodes' writes arrive through the primary's change feed, and `sync` waits on that feed.
 */
import type { IpcPeer } from '../core/cluster/ipc-peer.js';
import type { BatchOp, HaLock, LeaderInfo, Leadership, SharedStorage, StoredEntry } from './storage.js';

export type RemoteChange = { keys: readonly string[] } | { resync: true };

export class IpcStorage implements SharedStorage {
  readonly ha: HaLock;
  private readonly changeListeners: ((change: RemoteChange) => void)[] = [];

  constructor(
    private readonly peer: IpcPeer,
    /** The owner's store kind ("leveldb", "inmem"), for sys/seal-status. */
    readonly kind: string,
    /** Resolves with a reason when the channel to the primary closes. */
    channelLost: Promise<string>,
  ) {
    peer.handle('changed', (change) => {
      for (const listener of this.changeListeners) listener(change as RemoteChange);
      return Promise.resolve();
    });
    this.ha = new IpcHaLock(peer, channelLost);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return (await this.peer.call<Uint8Array | null>('get', { key })) ?? undefined;
  }

  put(key: string, value: Uint8Array): Promise<void> {
    return this.peer.call('put', { key, value });
  }

  delete(key: string): Promise<void> {
    return this.peer.call('delete', { key });
  }

  list(prefix: string): Promise<string[]> {
    return this.peer.call('list', { prefix });
  }

  batch(ops: readonly BatchOp[]): Promise<void> {
    return this.peer.call('batch', { ops });
  }

  async *entries(): AsyncIterable<StoredEntry> {
    yield* await this.peer.call<StoredEntry[]>('entries');
  }

  async replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number> {
    const all: StoredEntry[] = [];
    for await (const entry of entries) all.push(entry);
    return this.peer.call('replaceAll', { entries: all });
  }

  onRemoteChange(listener: (change: RemoteChange) => void): void {
    this.changeListeners.push(listener);
  }

  async sync(): Promise<void> {
    // Only another node's write can be unheard of: this node's were applied before they were acknowledged.
    if (this.kind === 'postgresql') await this.peer.call('sync');
  }

  async exclusive<T>(name: string, work: () => Promise<T>): Promise<T> {
    await this.peer.call('lock', { name });
    try {
      return await work();
    } finally {
      await this.peer.call('unlock', { name });
    }
  }

  async close(): Promise<void> {
    // The primary owns the store and closes it once every worker has stopped.
  }
}

/** The primary's election lock: one worker holds it and is the active one. */
class IpcHaLock implements HaLock {
  private readonly leaderListeners: (() => void)[] = [];
  /** The leadership held, by epoch: the primary says when the node lost the database's lock. */
  private readonly held = new Map<number, (reason: string) => void>();

  constructor(
    private readonly peer: IpcPeer,
    private readonly channelLost: Promise<string>,
  ) {
    peer.handle('leader', () => {
      for (const listener of this.leaderListeners) listener();
      return Promise.resolve();
    });
    peer.handle('haLost', async ({ epoch, reason }) => {
      const lose = this.held.get(epoch as number);
      this.held.delete(epoch as number);
      lose?.(reason as string);
    });
  }

  async tryAcquire(self: { readonly nodeId: string; readonly apiAddr: string }): Promise<Leadership | undefined> {
    const epoch = await this.peer.call<number | null>('haAcquire', { nodeId: self.nodeId, apiAddr: self.apiAddr });
    if (epoch === null) return undefined;
    // The primary keeps the lock for this worker while it lives, unless the node loses the database's lock.
    const lost = new Promise<string>((resolve) => this.held.set(epoch, resolve));
    return {
      epoch,
      lost: Promise.race([this.channelLost, lost]),
      release: async () => {
        this.held.delete(epoch);
        await this.peer.call('haRelease', { epoch });
      },
    };
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const held = await this.peer.call<{ nodeId: string; apiAddr: string; since: number } | null>('haLeader');
    return held ? { nodeId: held.nodeId, apiAddr: held.apiAddr, since: new Date(held.since) } : undefined;
  }

  onLeaderChange(listener: () => void): void {
    this.leaderListeners.push(listener);
  }

  async close(): Promise<void> {}
}
