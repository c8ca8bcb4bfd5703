/**
 * `sys/plugins/catalog/:type/` (list the names of one type's plugins) and, on the same pattern,
 * Vault's older `sys/plugins/catalog/:name` without a type (read, register, deregister). The
 * router treats a listing pattern as matching with or without its slash, so the two cannot be
 * separate paths: LIST reads the segment as a type, the other operations as a plugin name
 * (plugins-catalog-name.ts).
 */
import { definePath, listResponse } from '../../framework/index.js';
import { checkCatalogType } from '../../plugins/catalog.js';
import { pluginsCatalogNamePath } from './plugins-catalog-name.js';
import type { SystemDeps } from '../services.js';

export function pluginsCatalogTypePath(services: SystemDeps) {
  const byName = pluginsCatalogNamePath(services, false);
  return definePath({
    ...byName,
    pattern: 'plugins/catalog/:name/',
    operations: {
      ...byName.operations,
      list: {
        summary: 'List the plugins of a type.',
        handler: async (_req, input) => {
          const entries = await services.catalog.list(checkCatalogType(input.name));
          return listResponse([...new Set(entries.map((p) => p.name))].sort());
        },
      },
    },
    synopsis: 'List the plugins of a type, or read, register or deregister a plugin by name alone.',
    description:
      'LIST reads name as the plugin type (auth or secret) and names each of its plugins once, however many versions it has. GET, POST and DELETE act as on ' +
      'sys/plugins/catalog/:type/:name, the type being the type field or the one type the name is known under.',
  });
}
