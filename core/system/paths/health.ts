/** `sys/health`: status by HTTP code, for load balancers and monitors. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

const code = (description: string, dflt: number) =>
  ({ type: 'int', description, default: dflt, minimum: 100, maximum: 999 }) as const;

export function healthPath(services: SystemDeps) {
  return definePath({
    pattern: 'health',
    fields: {
      standbyok: { type: 'bool', description: 'Answer the active code on a standby node.', default: false },
      perfstandbyok: { type: 'bool', description: 'Answer the active code on a performance standby node.', default: false },
      activecode: code('Status code when initialized, unsealed and active.', 200),
      standbycode: code('Status code when unsealed and standby.', 429),
      drsecondarycode: code('Status code for a DR secondary (never the case here).', 472),
      performancestandbycode: code('Status code for a performance standby (never the case here).', 473),
      haunhealthycode: code('Status code for a standby that has lost touch with the active node (never reported here).', 474),
      removedcode: code('Status code for a node removed from its Raft cluster (never the case here: there is no Raft).', 530),
      sealedcode: code('Status code when sealed.', 503),
      uninitcode: code('Status code when not initialized.', 501),
    },
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report health as a status code and a body.',
        handler: async (_req, input) => {
          const status = await services.seal.status();
          const cluster = !status.sealed && services.unsealed.loaded ? services.unsealed.cluster : undefined;
          const standby = !status.sealed && services.ha !== undefined && services.ha.state !== 'active';
          const httpStatus = !status.initialized
            ? input.uninitcode
            : status.sealed
              ? input.sealedcode
              : standby && !input.standbyok
                ? input.standbycode
                : input.activecode;
          return {
            raw: {
              status: httpStatus,
              body: {
                initialized: status.initialized,
                sealed: status.sealed,
                standby,
                performance_standby: false,
                replication_performance_mode: 'disabled',
                replication_dr_mode: 'disabled',
                server_time_utc: Math.floor(services.clock.now().getTime() / 1000),
                version: services.version,
                enterprise: false,
                ...(cluster ? { cluster_name: cluster.name, cluster_id: cluster.id } : {}),
              },
            },
          };
        },
      },
    },
    synopsis: 'Health of the server.',
    description:
      'The status code tells the state: 200 active, 429 standby, 501 not initialized, 503 sealed; each can be ' +
      'overridden by a query parameter. HEAD answers the same code without a body.',
  });
}
