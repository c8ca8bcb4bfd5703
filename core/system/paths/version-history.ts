/** `LIST sys/version-history`: the versions this cluster has run (core/system/version-history.ts). */
import { definePath, listResponse } from '../../framework/index.js';
import { versionHistory } from '../version-history.js';
import type { SystemDeps } from '../services.js';

export function versionHistoryPath(services: SystemDeps) {
  return definePath({
    pattern: 'version-history/',
    fields: {},
    operations: {
      list: {
        summary: 'List the versions this cluster has run.',
        handler: async () => {
          const history = await versionHistory(services.barrier);
          const keyInfo = Object.fromEntries(
            history.map((v) => [v.version, { build_date: '', previous_version: v.previousVersion, timestamp_installed: v.timestampInstalled }]),
          );
          return listResponse(history.map((v) => v.version), keyInfo);
        },
      },
    },
    synopsis: 'The versions this cluster has run.',
    description: 'Each version, oldest first, with the time the active node first unsealed under it and the version before it.',
  });
}
