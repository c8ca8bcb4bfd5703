/** The identity backend, mounted at `identity/` (built in): read-only views of entities and aliases. */
import { FrameworkBackend, definePath, listResponse } from '../../framework/index.js';
import type { IdentityStore } from './identity-store.js';

export function createIdentityBackend(store: IdentityStore): FrameworkBackend {
  return new FrameworkBackend({
    description: 'identity store',
    paths: [
      definePath({
        pattern: 'entity/id/:id',
        fields: { id: { type: 'string', description: 'The entity id.', required: true } },
        operations: {
          read: {
            summary: 'Read an entity.',
            handler: async (_req, input) => {
              const found = await store.context(input.id);
              if (!found) return null;
              return {
                data: {
                  ...found.entity,
                  aliases: found.aliases,
                  policies: [],
                  direct_group_ids: [],
                  group_ids: [],
                  inherited_group_ids: [],
                  namespace_id: 'root',
                },
              };
            },
          },
        },
        synopsis: 'Read an entity by id.',
        description: 'An entity groups the aliases one client has across auth mounts.',
      }),
      definePath({
        pattern: 'entity/id/',
        fields: {},
        operations: { list: { summary: 'List entity ids.', handler: async () => listResponse(await store.listEntities()) } },
        synopsis: 'List entities.',
        description: 'Ids of every entity.',
      }),
      definePath({
        pattern: 'entity-alias/id/:id',
        fields: { id: { type: 'string', description: 'The alias id.', required: true } },
        operations: {
          read: {
            summary: 'Read an entity alias.',
            handler: async (_req, input) => {
              const alias = await store.readAlias(input.id);
              return alias ? { data: { ...alias, namespace_id: 'root' } } : null;
            },
          },
        },
        synopsis: 'Read an entity alias by id.',
        description: 'An alias ties a login identity on one auth mount to an entity; its metadata comes from the auth method.',
      }),
      definePath({
        pattern: 'entity-alias/id/',
        fields: {},
        operations: { list: { summary: 'List alias ids.', handler: async () => listResponse(await store.listAliases()) } },
        synopsis: 'List entity aliases.',
        description: 'Ids of every alias.',
      }),
    ],
  });
}
