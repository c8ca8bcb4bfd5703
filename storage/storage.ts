/**
 * The storage seam. Every layer — a physical backend (LevelDB, memory, later PostgreSQL), the
 * encrypting barrier above it, and the prefixed views handed to mounts — implements this one
 * async interface, so nothing above it knows which store is underneath.
 *
 * Keys are `/`-separated paths. `list(prefix)` returns the immediate children of `prefix`
 * (relative to it, sorted), with sub-folders once each and ending in `/`.
 */
export interface Storage {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
  /** Applies every operation or none. */
  batch(ops: readonly BatchOp[]): Promise<void>;
}

export type BatchOp =
  | { readonly type: 'put'; readonly key: string; readonly value: Uint8Array }
  | { readonly type: 'delete'; readonly key: string };

/** One stored key and its value as the physical store holds it (barrier ciphertext, mostly). */
export interface StoredEntry {
  readonly key: string;
  readonly value: Uint8Array;
}

/** A physical store: owns a resource that must be closed. */
export interface PhysicalStorage extends Storage {
  /** A short name for sys/seal-status `storage_type` ("leveldb", "inmem"). */
  readonly kind: string;
  /**
   * Every key and value at one moment, in key order, whatever is written meanwhile (snapshots).
   * Stopping the iteration early releases what it holds.
   */
  entries(): AsyncIterable<StoredEntry>;
  /**
   * Replaces the whole store with `entries` at once: readers see the old contents or the new,
   * never a mix, and if `entries` throws part way nothing has changed. Returns how many entries
   * were written.
   */
  replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number>;
  close(): Promise<void>;
}

/**
 * A physical store several Keywarden nodes share (PostgreSQL). Each node caches what it reads, so
 * the store tells every node which keys the others changed, and lets a node wait until it has
 * heard of every change committed before a given moment.
 */
export interface SharedStorage extends PhysicalStorage {
  /**
   * `keys` were changed by another node (delivered after that node's commit, in commit order).
   * `resync` instead of keys: changes may have been missed (the feed reconnected), so every cache
   * must be dropped.
   */
  onRemoteChange(listener: (change: { keys: readonly string[] } | { resync: true }) => void): void;
  /**
   * Resolves once every change committed by any node before this call has reached the
   * `onRemoteChange` listeners: a read after it sees every write acknowledged before it.
   * @throws UnavailableError when the store cannot be reached (the reason in the message).
   */
  sync(): Promise<void>;
  /** The election lock, when the store was configured with `ha_enabled`. */
  readonly ha?: HaLock;
  /**
   * Runs `work` while holding a cluster-wide lock named `name` (init: two nodes initializing at
   * once would each write a keyring, and one set of shares would open nothing).
   */
  exclusive<T>(name: string, work: () => Promise<T>): Promise<T>;
}

/** Who holds the active role, as the HA lock records it. */
export interface LeaderInfo {
  readonly nodeId: string;
  readonly apiAddr: string;
  readonly since: Date;
}

/** Holding the HA lock: this node is the active one until `lost` settles. */
export interface Leadership {
  /** Bumped at every change of leader; the store refuses writes made under an older epoch. */
  readonly epoch: number;
  /** Resolves with the reason when this node lost the lock (connection to the store lost). */
  readonly lost: Promise<string>;
  /** Gives the lock up (step-down, shutdown). */
  release(): Promise<void>;
}

/** The election of one active node among those sharing a store. */
export interface HaLock {
  /** Takes the lock if nobody holds it; undefined when another node does. */
  tryAcquire(self: { readonly nodeId: string; readonly apiAddr: string }): Promise<Leadership | undefined>;
  /** The current holder, or undefined when no node holds the lock. */
  leader(): Promise<LeaderInfo | undefined>;
  /** Called when another node became active (so standbys learn the new address at once). */
  onLeaderChange(listener: () => void): void;
  close(): Promise<void>;
}

/** Whether a physical store is shared by several nodes. */
export function isShared(storage: PhysicalStorage): storage is SharedStorage {
  return typeof (storage as Partial<SharedStorage>).sync === 'function' && typeof (storage as Partial<SharedStorage>).onRemoteChange === 'function';
}
