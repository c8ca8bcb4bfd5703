/** `sys/plugins/catalog/:type/`: the names of one type's plugins. */
import { definePath, listResponse } from '../../framework/index.js';
import { checkCatalogType } from '../../plugins/catalog.js';
import type { SystemDeps } from '../services.js';

export function pluginsCatalogTypePath(services: SystemDeps) {
  return definePath({
    pattern: 'plugins/catalog/:type/',
    fields: {
      type: { type: 'string', description: 'The plugin type: "auth" or "secret".', required: true },
    },
    sudo: true,
    operations: {
      list: {
        summary: 'List the plugins of a type.',
        handler: async (_req, input) => {
          const entries = await services.catalog.list(checkCatalogType(input.type));
          return listResponse([...new Set(entries.map((p) => p.name))].sort());
        },
      },
    },
    synopsis: 'List the plugins of a type.',
    description: 'Each name once, however many versions it has.',
  });
}
