/**
 * `sys/storage/snapshot-force` and Vault's `sys/storage/raft/snapshot-force`: restore a snapshot
 * even when another cluster made it (sudo). Its keyring and unseal configuration then replace this
 * cluster's, so the server seals itself and opens with that cluster's unseal keys. A snapshot whose
 * keyring is this cluster's must carry this cluster's seal: force never lets an altered one in.
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';
import { restoreSnapshot } from './storage-snapshot.js';

export function storageSnapshotForcePaths(services: SystemDeps): AnyPathDefinition[] {
  return ['storage/snapshot-force', 'storage/raft/snapshot-force'].map((pattern) =>
    definePath({
      pattern,
      fields: {},
      sudo: true,
      binaryBody: true,
      operations: {
        update: {
          summary: 'Restore a snapshot, even one made by another cluster.',
          handler: async (req) => restoreSnapshot(services, req, true),
        },
      },
      synopsis: 'Restore a snapshot of the whole store made by any cluster.',
      description:
        'Takes a snapshot file as the body, checks that it is complete and intact, and replaces the whole store with it. ' +
        "Unlike sys/storage/snapshot it accepts another cluster's snapshot: the server then seals itself and is unsealed with that cluster's unseal keys. " +
        "A snapshot of this cluster changed since it was made (its keyring opens here, its seal fails) is refused here too.",
    }),
  );
}
