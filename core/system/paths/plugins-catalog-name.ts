/**
 * `sys/plugins/catalog/:type/:name`: register, read and deregister one plugin version. The module
 * file (`command`) must be inside plugin_directory; its SHA-256 is checked every time a plugin
 * process loads it, so a file changed after registration is refused.
 *
 * `sys/plugins/catalog/:name`, Vault's older form without a type, does the same; the type is the
 * `type` field, or else the one type the name is known under (a name known as both is refused).
 * It is served on the typed list's pattern (plugins-catalog-type.ts).
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { canonicalVersion, checkCatalogType, checkPluginName, type CatalogType } from '../../plugins/catalog.js';
import type { SystemDeps } from '../services.js';

const TYPES: readonly CatalogType[] = ['auth', 'secret'];

/** The type a name without one is known under: registered (any version) or built in. */
async function typeOfName(services: SystemDeps, name: string): Promise<CatalogType | undefined> {
  const known: CatalogType[] = [];
  for (const type of TYPES) if ((await services.catalog.list(type)).some((p) => p.name === name)) known.push(type);
  if (known.length > 1) throw new BadRequestError(`plugin "${name}" exists as both auth and secret: name the type (sys/plugins/catalog/:type/:name, or the type field)`);
  return known[0];
}

export function pluginsCatalogNamePath(services: SystemDeps, typed = true) {
  return definePath({
    pattern: typed ? 'plugins/catalog/:type/:name' : 'plugins/catalog/:name',
    fields: {
      type: { type: 'string', description: 'The plugin type: "auth" or "secret".' },
      name: { type: 'string', description: 'The plugin name: the mount type it serves.', required: true },
      version: { type: 'string', description: 'Semantic version (v1.2.3); empty for the one unversioned entry a name may have (not for a built-in\'s name).' },
      sha256: { type: 'string', description: 'Hex SHA-256 of the module file; checked at every load.' },
      command: { type: 'string', description: 'The module file, relative to plugin_directory.' },
      args: { type: 'string-list', description: 'Arguments the plugin finds in its process.argv.' },
      env: { type: 'string-list', description: 'NAME=value pairs: the whole environment the plugin\'s process sees. Names that change how Node starts (NODE_*, LD_*, OPENSSL_*, …) are refused.' },
    },
    refusedFields: {
      oci_image: 'container plugins are not supported: a plugin here is a JavaScript module in plugin_directory',
      runtime: 'plugin runtimes are not supported: external plugins run in Node.js processes the server starts',
    },
    sudo: true,
    operations: {
      update: {
        summary: 'Register a plugin version.',
        handler: async (_req, input) => {
          if (!input.sha256) throw new BadRequestError('missing required field "sha256"');
          if (!input.command) throw new BadRequestError('missing required field "command"');
          const type = input.type ? checkCatalogType(input.type) : await typeOfName(services, checkPluginName(input.name));
          if (!type) throw new BadRequestError(`missing required field "type": plugin "${input.name}" is not in the catalog under any type`);
          await services.catalog.register({
            type,
            name: input.name,
            ...(input.version ? { version: input.version } : {}),
            sha256: input.sha256,
            command: input.command,
            args: input.args ?? [],
            env: input.env ?? [],
          });
          return null;
        },
      },
      read: {
        summary: 'Read a plugin version.',
        handler: async (_req, input) => {
          const type = input.type ? checkCatalogType(input.type) : await typeOfName(services, checkPluginName(input.name));
          const info = type && (await services.catalog.get(type, checkPluginName(input.name), input.version ?? ''));
          if (!info) return null;
          return {
            data: {
              name: info.name,
              version: info.version,
              builtin: info.builtin,
              command: info.command,
              args: info.args,
              sha256: info.sha256,
              ...(info.deprecation_status ? { deprecation_status: info.deprecation_status } : {}),
            },
          };
        },
      },
      delete: {
        summary: 'Deregister a plugin version.',
        handler: async (_req, input) => {
          const name = checkPluginName(input.name);
          const type = input.type ? checkCatalogType(input.type) : await typeOfName(services, name);
          // Deregistering what is not there does nothing, as in Vault.
          if (!type) return null;
          const version = input.version ? canonicalVersion(input.version) : '';
          // A mount running or pinned to the version would fail at its next start: refuse instead.
          const users = services.unsealed.mounts
            .allMounts()
            .filter((m) => m.entry.table === type && m.entry.type === name)
            .filter((m) => (m.running?.sha256 && m.running.version === version) || (version !== '' && m.entry.plugin_version === version));
          if (users.length > 0) {
            throw new BadRequestError(`plugin "${name}" version "${version || '(unversioned)'}" is in use by ${users.map((m) => m.routePrefix).join(', ')}: move or disable them first`);
          }
          await services.catalog.deregister(type, name, version);
          return null;
        },
      },
    },
    synopsis: 'Register, read or deregister a plugin.',
    description:
      'POST registers (or replaces) a version: sha256 and command are required, command naming a file inside ' +
      'plugin_directory. A built-in\'s name takes only versioned entries, which mounts run only when they ask for the version. ' +
      'GET and DELETE take ?version= (empty: the built-in of that name, else the unversioned entry). Without a type in ' +
      'the path, the type is the type field or the one type the name is known under.',
  });
}
