/**
 * `entity`, `entity/id/:id`, `entity/name/:name` (create, read, update, delete), their listings,
 * `entity/batch-delete` and `entity/merge`
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/entity).
 */
import { definePath, listResponse, type AnyPathDefinition, type FieldValues, type LogicalResponse } from '../../../framework/index.js';
import { BadRequestError } from '../../../errors.js';
import { deleteEntities, writeEntity } from '../entities.js';
import type { IdentityStore } from '../identity-store.js';
import { mergeEntities } from '../merge.js';
import type { Entity } from '../records.js';
import { entityView, stringMap } from '../views.js';

const ENTITY_FIELDS = {
  name: { type: 'string', description: 'The entity name; one is made up when a new entity has none.' },
  metadata: { type: 'map', description: 'Metadata (string values) kept with the entity and usable in policy templates.' },
  policies: { type: 'comma-string-list', description: 'Policies every token of the entity gets at its next use.' },
  disabled: { type: 'bool', description: 'A disabled entity\'s tokens are refused (403) until it is enabled again; they are not revoked.' },
} as const;

type EntityValues = FieldValues<typeof ENTITY_FIELDS>;

function entityInput(input: EntityValues) {
  return { name: input.name, metadata: stringMap('metadata', input.metadata), policies: input.policies, disabled: input.disabled };
}

/** Vault answers a new entity with its id, name and alias ids, and an update with 204. */
function written(result: { entity: Entity; created: boolean }): LogicalResponse | null {
  if (!result.created) return null;
  return { data: { id: result.entity.id, name: result.entity.name, aliases: result.entity.aliases.length > 0 ? result.entity.aliases : null } };
}

async function read(store: IdentityStore, entity: Entity | undefined): Promise<LogicalResponse | null> {
  return entity ? { data: await entityView(store, entity) } : null;
}

export function entityPaths(store: IdentityStore): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'entity',
      fields: { ...ENTITY_FIELDS, id: { type: 'string', description: 'The id of an entity to update; without it, the entity named `name` is updated or a new one made.' } },
      operations: {
        update: { summary: 'Create or update an entity.', handler: async (_req, input) => written(await writeEntity(store, input.id || undefined, entityInput(input))) },
      },
      synopsis: 'Create or update an entity.',
      description: 'An entity is one client across auth mounts: its aliases tie its logins to it, and its policies apply to all its tokens.',
    }),
    definePath({
      pattern: 'entity/id/:id',
      fields: { ...ENTITY_FIELDS, id: { type: 'string', description: 'The entity id.', required: true } },
      operations: {
        read: { summary: 'Read an entity.', handler: async (_req, input) => read(store, await store.readEntity(input.id)) },
        update: { summary: 'Update an entity.', handler: async (_req, input) => written(await writeEntity(store, input.id, entityInput(input))) },
        delete: {
          summary: 'Delete an entity, its aliases and its group memberships.',
          handler: async (_req, input) => {
            await deleteEntities(store, [input.id]);
            return null;
          },
        },
      },
      synopsis: 'Read, update or delete an entity by id.',
      description: 'Deleting an entity does not revoke its tokens; from then on they have only their own policies.',
    }),
    definePath({
      pattern: 'entity/name/:name',
      fields: { ...ENTITY_FIELDS, name: { type: 'string', description: 'The entity name.', required: true } },
      operations: {
        read: { summary: 'Read an entity by name.', handler: async (_req, input) => read(store, await store.entityByName(input.name)) },
        update: {
          summary: 'Create or update the entity with this name.',
          handler: async (_req, input) => written(await writeEntity(store, undefined, entityInput(input))),
        },
        delete: {
          summary: 'Delete the entity with this name.',
          handler: async (_req, input) => {
            const entity = await store.entityByName(input.name);
            if (entity) await deleteEntities(store, [entity.id]);
            return null;
          },
        },
      },
      synopsis: 'Read, create, update or delete an entity by name.',
      description: 'Names are unique and compared without case.',
    }),
    definePath({
      pattern: 'entity/id/',
      fields: {},
      operations: { list: { summary: 'List entity ids.', handler: () => listEntities(store, 'id') } },
      synopsis: 'List entities by id.',
      description: 'Ids of every entity, with each one\'s name and aliases in key_info.',
    }),
    definePath({
      pattern: 'entity/name/',
      fields: {},
      operations: { list: { summary: 'List entity names.', handler: () => listEntities(store, 'name') } },
      synopsis: 'List entities by name.',
      description: 'Names of every entity, with each one\'s name and aliases in key_info (by id, as Vault does).',
    }),
    definePath({
      pattern: 'entity/batch-delete',
      fields: { entity_ids: { type: 'comma-string-list', description: 'The ids of the entities to delete.', required: true } },
      operations: {
        update: {
          summary: 'Delete several entities at once.',
          handler: async (_req, input) => {
            if (input.entity_ids.length === 0) throw new BadRequestError('missing entity ids to delete');
            await deleteEntities(store, input.entity_ids);
            return null;
          },
        },
      },
      synopsis: 'Delete entities by id.',
      description: 'Ids that name no entity are skipped.',
    }),
    definePath({
      pattern: 'entity/merge',
      fields: {
        from_entity_ids: { type: 'comma-string-list', description: 'The entities merged into to_entity_id, and deleted.', required: true },
        to_entity_id: { type: 'string', description: 'The entity that gets their aliases, groups and tokens.', required: true },
        conflicting_alias_ids_to_keep: {
          type: 'comma-string-list',
          description: 'Where a from-entity and the to-entity both have an alias on one auth mount: the alias ids to keep (the other is deleted).',
        },
        force: {
          type: 'bool',
          description: 'Vault\'s choice of the to-entity\'s MFA secrets over the from-entities\'; Keywarden keeps no MFA secrets, so there is never a conflict to force.',
        },
      },
      operations: {
        update: {
          summary: 'Merge entities into one.',
          handler: async (_req, input) => {
            if (!input.to_entity_id) throw new BadRequestError('missing entity id to merge to');
            if (input.from_entity_ids.length === 0) throw new BadRequestError('missing entity ids to merge from');
            await mergeEntities(store, {
              toEntityId: input.to_entity_id,
              fromEntityIds: input.from_entity_ids,
              conflictingAliasIdsToKeep: input.conflicting_alias_ids_to_keep ?? [],
            });
            return null;
          },
        },
      },
      synopsis: 'Merge entities.',
      description: 'The from-entities\' aliases move to the to-entity, their group memberships pass to it, and their tokens act as it from their next use.',
    }),
  ];
}

async function listEntities(store: IdentityStore, by: 'id' | 'name'): Promise<LogicalResponse> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of await store.listEntities()) {
    const entity = await store.readEntity(id);
    if (!entity) continue;
    keys.push(by === 'id' ? entity.id : entity.name);
    const aliases = await store.aliasesOf(entity);
    info[entity.id] = {
      name: entity.name,
      ...(aliases.length > 0
        ? { aliases: aliases.map((a) => ({ id: a.id, name: a.name, mount_accessor: a.mount_accessor, mount_type: a.mount_type, mount_path: a.mount_path })) }
        : {}),
    };
  }
  // Vault keys key_info by entity id in both listings.
  return listResponse(keys, info);
}
