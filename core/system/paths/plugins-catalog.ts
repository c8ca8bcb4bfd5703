/** `sys/plugins/catalog`: every plugin a mount may run, built-in and registered, as Vault lists them. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function pluginsCatalogPath(services: SystemDeps) {
  return definePath({
    pattern: 'plugins/catalog',
    fields: {},
    operations: {
      read: {
        summary: 'List the plugin catalog.',
        handler: async () => {
          const all = await services.catalog.list();
          const names = (type: string) => [...new Set(all.filter((p) => p.type === type).map((p) => p.name))].sort();
          return {
            data: {
              auth: names('auth'),
              secret: names('secret'),
              // Vault's third plugin type; there are no database plugins here.
              database: [],
              detailed: all.map((p) => ({
                name: p.name,
                type: p.type,
                version: p.version,
                builtin: p.builtin,
                ...(p.builtin ? { deprecation_status: p.deprecation_status } : { sha256: p.sha256 }),
              })),
            },
          };
        },
      },
    },
    synopsis: 'List the plugin catalog.',
    description:
      'Names by type (auth, secret, database) and, in detailed, every entry with its version: built-in ' +
      'plugins as v<version>+builtin, external ones with the SHA-256 they are checked against.',
  });
}
