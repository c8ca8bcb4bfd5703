/**
 * `sys/storage/snapshot`, and `sys/storage/raft/snapshot`, Vault's path for the same thing, so
 * existing tooling works: GET streams a snapshot of the whole store, POST restores one made by
 * this cluster (sudo on both). The two names are one resource to the ACL
 * (core/auth/policy/resource-names.ts), so a policy cannot allow one and be bypassed by the other.
 */
import { BadRequestError } from '../../errors.js';
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { LogicalRequest, LogicalResponse } from '../../framework/request.js';
import type { SystemDeps } from '../services.js';

export function storageSnapshotPaths(services: SystemDeps): AnyPathDefinition[] {
  return ['storage/snapshot', 'storage/raft/snapshot'].map((pattern) =>
    definePath({
      pattern,
      fields: {},
      sudo: true,
      binaryBody: true,
      operations: {
        read: {
          summary: 'Stream a snapshot of the whole store.',
          handler: async (req) => saveSnapshot(services, req),
        },
        update: {
          summary: 'Restore a snapshot made by this cluster.',
          handler: async (req) => restoreSnapshot(services, req, false),
        },
      },
      synopsis: 'Save or restore a snapshot of the whole store.',
      description:
        'GET answers application/octet-stream: every stored key at one moment, values still encrypted by the barrier, with a header naming the keyring term and a checksum. ' +
        'POST takes such a file as the body and replaces the whole store with it at once, after checking it completely; a corrupt or truncated file, or one made by another cluster, is refused and changes nothing (see snapshot-force). ' +
        'Policies decide both names of this path together: every rule for either name must allow the request, and one must apply.',
    }),
  );
}

export function saveSnapshot(services: SystemDeps, req: LogicalRequest): LogicalResponse {
  // A wrapped answer would have to be kept whole in a cubbyhole: refused rather than ignored.
  if (req.wrapTtl !== undefined) throw new BadRequestError('a snapshot cannot be response-wrapped (X-Vault-Wrap-TTL)');
  return { raw: { status: 200, binary: services.snapshots.save() } };
}

export async function restoreSnapshot(services: SystemDeps, req: LogicalRequest, force: boolean): Promise<LogicalResponse | null> {
  services.requireActive();
  if (!req.bodyStream) throw new BadRequestError('no snapshot: send the snapshot file as the request body');
  const result = await services.snapshots.restore(req.bodyStream, force);
  if (!result.sealed) return null;
  return {
    warnings: ["the snapshot's keyring belongs to another cluster: this server sealed itself; unseal it with the unseal keys of the cluster that made the snapshot"],
  };
}
