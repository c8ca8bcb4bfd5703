/**
 * `group-alias`, `group-alias/id/:id` and its listing
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/group-alias).
 */
import { definePath, listResponse, type AnyPathDefinition, type LogicalResponse } from '../../../framework/index.js';
import type { MountByAccessor } from '../entities.js';
import { deleteGroupAlias, writeGroupAlias } from '../group-aliases.js';
import type { IdentityStore } from '../identity-store.js';
import type { GroupAlias } from '../records.js';
import { groupAliasView } from '../views.js';

const FIELDS = {
  name: { type: 'string', description: 'The group\'s name at the auth method\'s identity provider (a value of a JWT\'s groups claim).' },
  mount_accessor: { type: 'string', description: 'The accessor of the auth mount whose logins carry the group name.' },
  canonical_id: { type: 'string', description: 'The external group the alias belongs to; a new external group is made when none is given.' },
} as const;

function written(alias: GroupAlias): LogicalResponse {
  return { data: { id: alias.id, canonical_id: alias.canonical_id } };
}

export function groupAliasPaths(store: IdentityStore, mounts: MountByAccessor): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'group-alias',
      fields: { ...FIELDS, id: { type: 'string', description: 'The id of a group alias to update.' } },
      operations: {
        update: {
          summary: 'Create or update a group alias.',
          handler: async (_req, input) => written(await writeGroupAlias(store, mounts, input.id || undefined, input)),
        },
      },
      synopsis: 'Create or update a group alias.',
      description: 'A group alias makes the entities whose logins on its mount carry its name members of its external group.',
    }),
    definePath({
      pattern: 'group-alias/id/:id',
      fields: { ...FIELDS, id: { type: 'string', description: 'The group alias id.', required: true } },
      operations: {
        read: {
          summary: 'Read a group alias.',
          handler: async (_req, input) => {
            const alias = await store.readGroupAlias(input.id);
            return alias ? { data: groupAliasView(alias) } : null;
          },
        },
        update: { summary: 'Update a group alias.', handler: async (_req, input) => written(await writeGroupAlias(store, mounts, input.id, input)) },
        delete: {
          summary: 'Delete a group alias.',
          handler: async (_req, input) => {
            await deleteGroupAlias(store, input.id);
            return null;
          },
        },
      },
      synopsis: 'Read, update or delete a group alias by id.',
      description: 'Deleting a group alias keeps its group.',
    }),
    definePath({
      pattern: 'group-alias/id/',
      fields: {},
      operations: {
        list: {
          summary: 'List group alias ids.',
          handler: async () => {
            const keys: string[] = [];
            const info: Record<string, unknown> = {};
            for (const id of await store.listGroupAliases()) {
              const alias = await store.readGroupAlias(id);
              if (!alias) continue;
              keys.push(alias.id);
              info[alias.id] = { canonical_id: alias.canonical_id, mount_accessor: alias.mount_accessor, mount_path: alias.mount_path, mount_type: alias.mount_type, name: alias.name };
            }
            return listResponse(keys, info);
          },
        },
      },
      synopsis: 'List group aliases.',
      description: 'Ids of every group alias, with its group, name and mount in key_info.',
    }),
  ];
}
