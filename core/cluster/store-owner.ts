/**
 * The primary process's side of the workers' storage (storage/ipc.ts): it owns the one physical
 * store and runs every worker's operations on it, reports each write to the other workers and
 * answers the writer only once all of them have applied it, and keeps the election lock that
 * makes one worker the active one. A worker that dies gives up what it held (the HA lock, named
 * locks), so the others carry on.
 *
 * On PostgreSQL the node is one member of a cluster of nodes (docs/architecture.md, "Workers"):
 * this process is the node as the database sees it — one pool, one change feed, one HA record —
 * and its workers a local cluster under it. The worker that takes the local lock bids for the
 * database's HA lock in the node's name and is the cluster's active node if it wins; the other
 * nodes' changes reach every worker through the feed, and a worker's `sync` waits on it.
 */
import type { Logger } from 'pino';
import { KeyedLock } from '../../sdk/keyed-lock.js';
import { isShared, type BatchOp, type Leadership, type PhysicalStorage, type SharedStorage, type StoredEntry } from '../../storage/storage.js';
import { UnavailableError, errorMessage } from '../errors.js';
import { STEP_DOWN_PAUSE_MS } from '../ha/ha-manager.js';
import type { IpcPeer } from './ipc-peer.js';

interface Holder {
  readonly worker: number;
  readonly nodeId: string;
  readonly apiAddr: string;
  readonly since: number;
  readonly epoch: number;
  /** PostgreSQL HA: the node's hold on the database's lock, which this worker uses. */
  readonly leadership?: Leadership;
}

/** The node as the other nodes sharing its store know it (PostgreSQL HA). */
export interface NodeIdentity {
  readonly nodeId: string;
  /** The configuration's api_addr: where the other nodes forward to (any worker of this node takes it). */
  readonly apiAddr: string;
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
  /** Shared with other nodes (PostgreSQL): their changes come through its feed. */
  private readonly shared: SharedStorage | undefined;
  /** A bid for the database's HA lock under way: the other workers wait for the next round. */
  private bidding = false;
  /** After the active worker gave the database's lock up (a step-down), no worker bids before this time (ms). */
  private pauseUntil = 0;

  constructor(
    private readonly store: PhysicalStorage,
    private readonly logger: Logger,
    private readonly node?: NodeIdentity,
  ) {
    this.shared = isShared(store) ? store : undefined;
    // In commit order over each worker's channel, as the feed delivers them.
    this.shared?.onRemoteChange((change) => void this.broadcast(undefined, 'changed', change));
    this.shared?.ha?.onLeaderChange(() => void this.broadcast(undefined, 'leader'));
  }

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
    peer.handle('sync', async () => this.shared?.sync());
    peer.handle('lock', ({ name }) => this.lock(worker, name as string));
    peer.handle('unlock', ({ name }) => {
      this.unlock(worker, name as string);
      return Promise.resolve();
    });
    peer.handle('haAcquire', ({ nodeId, apiAddr }) => this.acquire(worker, nodeId as string, apiAddr as string));
    peer.handle('haRelease', async ({ epoch }) => {
      if (this.holder?.worker !== worker || this.holder.epoch !== epoch) return;
      // The node steps down, not only its worker: a sibling taking the role back at once would undo it.
      if (this.holder.leadership) this.pauseUntil = Date.now() + STEP_DOWN_PAUSE_MS;
      await this.release();
    });
    peer.handle('haLeader', () => this.leader());
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
      void this.release();
    }
  }

  /** Asks one worker to run `op`. */
  call<T>(worker: number, op: string, args: Record<string, unknown> = {}): Promise<T> {
    const peer = this.workers.get(worker);
    if (!peer) return Promise.reject(new UnavailableError(`worker ${worker} is not serving`));
    return peer.call<T>(op, args);
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

  /** The named lock among this node's workers, and among the nodes too when the store is shared. */
  private lock(worker: number, name: string): Promise<void> {
    return new Promise<void>((granted, refused) => {
      const hold = () =>
        new Promise<void>((release) => {
          // The worker died while it waited: nobody would release the lock.
          if (!this.workers.has(worker)) return release();
          const mine = this.held.get(worker) ?? new Map<string, () => void>();
          this.held.set(worker, mine);
          mine.set(name, release);
          granted();
        });
      void this.locks.run(name, () => (this.shared ? this.shared.exclusive(name, hold) : hold())).catch(refused);
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
    const lock = this.shared?.ha;
    let leadership: Leadership | undefined;
    if (lock && this.node) {
      if (this.bidding) return null;
      if (Date.now() < this.pauseUntil) {
        // Looking ends the pause if another node has taken the role meanwhile (leader()).
        await this.leader().catch(() => undefined);
        return null;
      }
      this.bidding = true;
      try {
        leadership = await lock.tryAcquire(this.node);
      } finally {
        this.bidding = false;
      }
      if (!leadership) return null;
      // The worker died during the bid: the node gives the role up at once.
      if (!this.workers.has(worker)) {
        await leadership.release();
        return null;
      }
    }
    const holder: Holder = { worker, nodeId, apiAddr, since: Date.now(), epoch: leadership?.epoch ?? ++this.epoch, ...(leadership ? { leadership } : {}) };
    this.holder = holder;
    void leadership?.lost.then((reason) => {
      if (this.holder !== holder) return;
      this.holder = undefined;
      // The worker steps down as a node that lost the lock does (IpcHaLock's `lost`).
      void this.workers.get(worker)?.call('haLost', { epoch: holder.epoch, reason }).catch(() => undefined);
      void this.broadcast(undefined, 'leader');
    });
    void this.broadcast(worker, 'leader');
    return holder.epoch;
  }

  private async release(): Promise<void> {
    const leadership = this.holder?.leadership;
    this.holder = undefined;
    await leadership?.release().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'the HA lock could not be given up; it lapses with its lease'));
    void this.broadcast(undefined, 'leader');
  }

  /**
   * Who is active, as a worker sees it: a worker of this node by its own socket, or another node
   * by its api_addr. While this node holds the database's lock without an active worker (a change
   * under way) nobody is, and a standby waits for the next round.
   */
  private async leader(): Promise<{ nodeId: string; apiAddr: string; since: number } | null> {
    if (this.holder) return { nodeId: this.holder.nodeId, apiAddr: this.holder.apiAddr, since: this.holder.since };
    const elsewhere = await this.shared?.ha?.leader();
    if (!elsewhere || elsewhere.nodeId === this.node?.nodeId) return null;
    // The node's step-down pause has done its work: another node took the role (STEP_DOWN_PAUSE_MS).
    this.pauseUntil = 0;
    return { nodeId: elsewhere.nodeId, apiAddr: elsewhere.apiAddr, since: elsewhere.since.getTime() };
  }
}
