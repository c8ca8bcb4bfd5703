/**
 * `entity-alias`, `entity-alias/id/:id` and its listing
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/entity-alias), and the same
 * under the older names `alias` and `persona` that older clients still call, where the entity is
 * also accepted as `entity_id`.
 */
import { definePath, listResponse, type AnyPathDefinition, type FieldValues, type LogicalResponse } from '../../../framework/index.js';
import { deleteAlias, writeAlias, type MountByAccessor } from '../entities.js';
import type { IdentityStore } from '../identity-store.js';
import type { EntityAlias } from '../records.js';
import { aliasView, stringMap } from '../views.js';

const ALIAS_FIELDS = {
  name: { type: 'string', description: 'The alias name: the identity\'s name at its auth method (a username, a role id, a JWT subject).' },
  mount_accessor: { type: 'string', description: 'The accessor of the auth mount the alias belongs to.' },
  canonical_id: { type: 'string', description: 'The entity the alias belongs to; a new entity is made when a new alias has none.' },
  custom_metadata: { type: 'map', description: 'Metadata (string values) set through the API; a login\'s metadata is kept apart in `metadata`.' },
} as const;

const LEGACY_FIELDS = {
  ...ALIAS_FIELDS,
  entity_id: { type: 'string', description: 'The older name of canonical_id.', deprecated: true },
} as const;

type AliasValues = FieldValues<typeof LEGACY_FIELDS>;

function aliasInput(input: Partial<AliasValues>, id: string | undefined) {
  return {
    id,
    name: input.name,
    mount_accessor: input.mount_accessor,
    canonical_id: input.canonical_id || input.entity_id,
    custom_metadata: stringMap('custom_metadata', input.custom_metadata),
  };
}

function written(alias: EntityAlias | undefined): LogicalResponse | null {
  return alias ? { data: { id: alias.id, canonical_id: alias.canonical_id } } : null;
}

/** The alias paths under `prefix` (entity-alias, or a legacy name). */
function aliasPaths(store: IdentityStore, mounts: MountByAccessor, prefix: string, legacy: boolean): AnyPathDefinition[] {
  const fields = legacy ? LEGACY_FIELDS : ALIAS_FIELDS;
  return [
    definePath({
      pattern: prefix,
      fields: { ...fields, id: { type: 'string', description: 'The id of an alias to update.' } },
      operations: {
        update: { summary: 'Create or update an entity alias.', handler: async (_req, input) => written(await writeAlias(store, mounts, aliasInput(input, input.id || undefined))) },
      },
      synopsis: 'Create or update an entity alias.',
      description: 'Without id, the alias with this mount_accessor and name is updated, or a new one made.',
    }),
    definePath({
      pattern: `${prefix}/id/:id`,
      fields: { ...fields, id: { type: 'string', description: 'The alias id.', required: true } },
      operations: {
        read: {
          summary: 'Read an entity alias.',
          handler: async (_req, input) => {
            const alias = await store.readAlias(input.id);
            return alias ? { data: aliasView(alias) } : null;
          },
        },
        update: { summary: 'Update an entity alias.', handler: async (_req, input) => written(await writeAlias(store, mounts, aliasInput(input, input.id))) },
        delete: {
          summary: 'Delete an entity alias.',
          handler: async (_req, input) => {
            await deleteAlias(store, input.id);
            return null;
          },
        },
      },
      synopsis: 'Read, update or delete an entity alias by id.',
      description: 'An alias ties a login identity on one auth mount to an entity; its metadata comes from the auth method.',
    }),
    definePath({
      pattern: `${prefix}/id/`,
      fields: {},
      operations: { list: { summary: 'List alias ids.', handler: () => listAliases(store) } },
      synopsis: 'List entity aliases.',
      description: 'Ids of every alias, with its entity, name and mount in key_info.',
    }),
  ];
}

export function entityAliasPaths(store: IdentityStore, mounts: MountByAccessor): AnyPathDefinition[] {
  return [...aliasPaths(store, mounts, 'entity-alias', false), ...aliasPaths(store, mounts, 'alias', true), ...aliasPaths(store, mounts, 'persona', true)];
}

async function listAliases(store: IdentityStore): Promise<LogicalResponse> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of await store.listAliases()) {
    const alias = await store.readAlias(id);
    if (!alias) continue;
    keys.push(alias.id);
    info[alias.id] = {
      canonical_id: alias.canonical_id,
      custom_metadata: alias.custom_metadata ?? {},
      local: false,
      mount_accessor: alias.mount_accessor,
      mount_path: alias.mount_path,
      mount_type: alias.mount_type,
      name: alias.name,
    };
  }
  return listResponse(keys, info);
}
