/** `sys/plugins/reload/backend`: rebuild backends from storage, by plugin name or by mount. */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { LiveMount } from '../../mounts/mount-table.js';
import type { SystemDeps } from '../services.js';

export function pluginsReloadPath(services: SystemDeps) {
  return definePath({
    pattern: 'plugins/reload/backend',
    fields: {
      plugin: { type: 'string', description: 'Reload every mount of this plugin type.' },
      mounts: { type: 'comma-string-list', description: 'Reload these mounts (secrets paths, or auth/<path>).' },
      scope: { type: 'string', description: 'Empty (this node) or "global"; a single node treats both alike.', allowedValues: ['', 'global'] },
    },
    operations: {
      update: {
        summary: 'Reload backends.',
        handler: async (req, input) => {
          const hasPlugin = input.plugin !== undefined;
          const hasMounts = input.mounts !== undefined && input.mounts.length > 0;
          if (hasPlugin && hasMounts) throw new BadRequestError('plugin and mounts cannot be set at the same time');
          if (!hasPlugin && !hasMounts) throw new BadRequestError('plugin or mounts must be provided');
          const table = services.unsealed.mounts;
          let targets: LiveMount[];
          if (hasPlugin) {
            if (!(await services.catalog.has(input.plugin!))) throw new BadRequestError(`plugin not found in the catalog: ${input.plugin}`);
            targets = table.byType(input.plugin!);
          } else {
            targets = input.mounts!.map((raw) => {
              const path = raw.replace(/^sys\//, '');
              const isAuth = path.startsWith('auth/');
              try {
                return table.live(isAuth ? 'auth' : 'secret', isAuth ? path.slice('auth/'.length) : path);
              } catch {
                throw new BadRequestError(`cannot fetch mount entry on ${JSON.stringify(raw)}`);
              }
            });
            const builtin = targets.find((t) => t.entry.builtin);
            if (builtin) throw new BadRequestError(`the built-in mount "${builtin.routePrefix}" cannot be reloaded`);
          }
          await table.reload(targets);
          return { data: { reload_id: req.id } };
        },
      },
    },
    synopsis: 'Reload mounted backends.',
    description:
      'Exactly one of plugin or mounts. Each backend is rebuilt from storage: in-memory state (caches, locks, ' +
      'clients) starts afresh; stored data and the mount entry are kept.',
  });
}
