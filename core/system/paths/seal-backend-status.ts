/**
 * `sys/seal-backend-status` (Vault's, https://developer.hashicorp.com/vault/api-docs/system/seal-backend-status):
 * each configured seal's health as last seen, and whether the stored root key is wrapped by every
 * enabled one; readable while sealed, as seal-status is.
 */
import { definePath } from '../../framework/index.js';
import type { SealBackend } from '../../seal/seal-set.js';
import type { SystemDeps } from '../services.js';

export function sealBackendStatusPath(services: SystemDeps) {
  return definePath({
    pattern: 'seal-backend-status',
    fields: {},
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report the health of each configured seal.',
        handler: async () => {
          const report = services.seal.sealBackends();
          // With Shamir shares there is no seal service to be down.
          const backends: readonly Pick<SealBackend, 'name' | 'disabled' | 'healthy' | 'unhealthySince'>[] = report?.backends ?? [{ name: 'shamir', disabled: false, healthy: true }];
          const down = backends.filter((b) => !b.healthy && !b.disabled);
          const since = down.map((b) => b.unhealthySince?.getTime() ?? Infinity).reduce((a, b) => Math.min(a, b), Infinity);
          return {
            raw: {
              status: 200,
              body: {
                healthy: down.length === 0,
                ...(Number.isFinite(since) ? { unhealthy_since: new Date(since).toISOString() } : {}),
                fully_wrapped: report?.fullyWrapped ?? true,
                backends: backends.map((b) => ({
                  name: b.name,
                  healthy: b.healthy,
                  configured: true,
                  disabled: b.disabled,
                  ...(b.unhealthySince ? { unhealthy_since: b.unhealthySince.toISOString() } : {}),
                })),
              },
            },
          };
        },
      },
    },
    synopsis: 'The health of each configured seal.',
    description: 'Whether each seal answered the last time it was asked to wrap or open the root key, and whether every enabled seal wraps it.',
  });
}
