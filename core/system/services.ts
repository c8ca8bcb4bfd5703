/** What the sys backend reaches into: host services, not a storage view like other backends. */
import type { SealManager } from '../seal/seal-manager.js';
import type { MountTable } from '../mounts/mount-table.js';
import type { Barrier } from '../../storage/barrier.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { Clock } from '../clock.js';

export interface ClusterInfo {
  readonly name: string;
  readonly id: string;
}

export interface SystemServices {
  readonly seal: SealManager;
  readonly barrier: Barrier;
  /** Undefined while sealed. */
  mounts(): MountTable | undefined;
  readonly registry: PluginRegistry;
  readonly clock: Clock;
  /** Undefined while sealed. */
  cluster(): ClusterInfo | undefined;
  /** `sys/seal-status` `storage_type`. */
  readonly storageType: string;
  readonly version: string;
  /** System TTL defaults in seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

/** Reached only on paths that are not available while sealed, so the host has checked already. */
export function unsealedMounts(services: SystemServices): MountTable {
  const table = services.mounts();
  if (!table) throw new Error('mount table used while sealed');
  return table;
}
