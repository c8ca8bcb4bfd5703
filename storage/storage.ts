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

/** A physical store: owns a resource that must be closed. */
export interface PhysicalStorage extends Storage {
  /** A short name for sys/seal-status `storage_type` ("leveldb", "inmem"). */
  readonly kind: string;
  close(): Promise<void>;
}
