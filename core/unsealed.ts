/**
 * What an unsealed host holds beyond the barrier, reached through one handle (host-state.ts keeps
 * it): each part throws the sealed error while it is not loaded, so a caller that needs it simply
 * uses it, and the request is answered 503 as any other request to a sealed server. The few
 * callers with something to do while sealed (nothing to list, nothing to run) ask `loaded` first.
 */
import type { Storage } from '../storage/storage.js';
import type { MountTable } from './mounts/mount-table.js';

/** The cluster's name and id, made on its first unseal; seal-status, health and snapshots show them. */
export interface ClusterInfo {
  readonly name: string;
  readonly id: string;
}

export interface Unsealed {
  /**
   * Whether the parts below are loaded: false while sealed, while an unseal is still loading, and
   * on a standby of a cluster whose first active node has not written them yet.
   */
  readonly loaded: boolean;
  /** The live mount table. @throws SealedError while not loaded. */
  readonly mounts: MountTable;
  /** @throws SealedError while not loaded. */
  readonly cluster: ClusterInfo;
  /** The cubbyhole mount's storage (every token's cubbyhole, wrapped responses included). @throws SealedError while not loaded. */
  readonly cubbyholeStorage: Storage;
}
