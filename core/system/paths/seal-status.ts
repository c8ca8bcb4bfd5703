/** `sys/seal-status`: seal state, threshold and progress; readable while sealed. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export async function sealStatusBody(services: SystemDeps): Promise<Record<string, unknown>> {
  const status = await services.seal.status();
  const cluster = !status.sealed && services.unsealed.loaded ? services.unsealed.cluster : undefined;
  return {
    type: status.type,
    initialized: status.initialized,
    sealed: status.sealed,
    t: status.t,
    n: status.n,
    progress: status.progress,
    nonce: status.nonce,
    version: services.version,
    build_date: '',
    migration: status.migration,
    ...(cluster ? { cluster_name: cluster.name, cluster_id: cluster.id } : {}),
    recovery_seal: status.recoverySeal,
    storage_type: services.storageType,
    // Not in Vault's answer: why an auto seal has not unsealed this node yet.
    ...(status.sealError ? { seal_error: status.sealError } : {}),
  };
}

export function sealStatusPath(services: SystemDeps) {
  return definePath({
    pattern: 'seal-status',
    fields: {},
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report the seal state.',
        handler: async () => ({ raw: { status: 200, body: await sealStatusBody(services) } }),
      },
    },
    synopsis: 'The seal state of the server.',
    description: 'Whether the server is initialized and sealed, the share threshold (t), the number of shares (n) and the unseal progress.',
  });
}
