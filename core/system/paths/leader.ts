/** `sys/leader`: HA leadership; this server is a single node. */
import { definePath } from '../../framework/index.js';

export function leaderPath() {
  return definePath({
    pattern: 'leader',
    fields: {},
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report the HA leader.',
        handler: async () => ({
          raw: {
            status: 200,
            body: {
              ha_enabled: false,
              is_self: false,
              active_time: '0001-01-01T00:00:00Z',
              leader_address: '',
              leader_cluster_address: '',
              performance_standby: false,
              performance_standby_last_remote_wal: 0,
            },
          },
        }),
      },
    },
    synopsis: 'The HA leader of the cluster.',
    description: 'Without HA storage every node answers ha_enabled false. The vault CLI reads this after status and unseal.',
  });
}
