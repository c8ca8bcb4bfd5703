/** `sys/leader` and `sys/step-down`: HA leadership. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

const NEVER = '0001-01-01T00:00:00Z';

export function leaderPath(services: SystemDeps) {
  return definePath({
    pattern: 'leader',
    fields: {},
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report the HA leader.',
        handler: async () => {
          const ha = services.ha;
          // Sealed or single-node: what Vault answers without an active HA node.
          const status = ha && !services.barrier.sealed ? await ha.leaderStatus() : undefined;
          return {
            raw: {
              status: 200,
              body: {
                ha_enabled: ha !== undefined,
                is_self: status?.isSelf ?? false,
                active_time: status?.activeTime?.toISOString() ?? NEVER,
                leader_address: status?.leaderAddress ?? '',
                // Nodes talk over the API address (there is no separate cluster port).
                leader_cluster_address: status?.leaderAddress ?? '',
                performance_standby: false,
                performance_standby_last_remote_wal: 0,
              },
            },
          };
        },
      },
    },
    synopsis: 'The HA leader of the cluster.',
    description:
      'ha_enabled tells whether the storage elects an active node; is_self whether this node is it; leader_address ' +
      'is the active node\'s api_addr. Without HA storage every node answers ha_enabled false.',
  });
}

export function stepDownPath(services: SystemDeps) {
  return definePath({
    pattern: 'step-down',
    fields: {},
    sudo: true,
    operations: {
      update: {
        summary: 'Make the active node give its role up.',
        handler: async () => {
          // On a standby this forwards the request to the active node, which steps down.
          services.requireActive();
          await services.ha?.stepDown();
          return null;
        },
      },
    },
    synopsis: 'Step the active node down.',
    description:
      'The active node releases the HA lock and stays a standby for a moment, so another node takes the role. ' +
      'Without HA it does nothing. Needs root or sudo.',
  });
}
