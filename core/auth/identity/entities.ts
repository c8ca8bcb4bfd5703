/**
 * Changes to entities and their aliases, as Vault's identity API makes them
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/entity and .../entity-alias):
 * each runs under the store's write lock and lands in one batch, so a failed check writes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { BatchOp } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';
import type { IdentityStore } from './identity-store.js';
import { groupOps, aliasDeleteOps, identityPolicyList, index, KEYS, newEntity, put, type AuthMountRef, type Entity, type EntityAlias, type Group, type MountByAccessor } from './records.js';

export type { MountByAccessor } from './records.js';

export interface EntityInput {
  readonly name?: string | undefined;
  readonly metadata?: Record<string, string> | undefined;
  readonly policies?: readonly string[] | undefined;
  readonly disabled?: boolean | undefined;
}


/**
 * Creates or updates an entity: by id (which must exist), else by name (created when new).
 * Returns the entity and whether it is new.
 */
export function writeEntity(store: IdentityStore, id: string | undefined, input: EntityInput): Promise<{ entity: Entity; created: boolean }> {
  return store.exclusive(async () => {
    const nameIndex = await store.nameIndexOps();
    let previous: Entity | undefined;
    if (id) {
      previous = await store.readEntity(id);
      if (!previous) throw new BadRequestError('entity not found from id');
    }
    if (input.name) {
      const named = await store.entityByName(input.name);
      if (named && !previous) previous = named;
      else if (named && named.id !== previous?.id) throw new BadRequestError('entity name is already in use');
    }
    const now = store.now();
    const entityId = previous?.id ?? randomUUID();
    const base = previous ?? newEntity(entityId, input.name || `entity_${entityId.slice(0, 8)}`, now);
    const entity: Entity = {
      ...base,
      ...(input.name ? { name: input.name } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
      ...(input.policies !== undefined ? { policies: identityPolicyList(input.policies) } : {}),
      ...(input.disabled !== undefined ? { disabled: input.disabled } : {}),
      last_update_time: now,
    };
    await store.apply([...nameIndex, ...store.entityOps(entity, previous)]);
    return { entity, created: previous === undefined };
  });
}

/** Deletes entities with their aliases and memberships; ids that name nothing are skipped. */
export function deleteEntities(store: IdentityStore, ids: readonly string[]): Promise<void> {
  return store.exclusive(async () => {
    const ops: BatchOp[] = [];
    const groups = new Map<string, { before: Group; members: Set<string> }>();
    for (const id of new Set(ids)) {
      const entity = await store.readEntity(id);
      if (!entity) continue;
      ops.push({ type: 'delete', key: KEYS.entity(entity.id) }, { type: 'delete', key: KEYS.entityName(entity.name) });
      for (const alias of await store.aliasesOf(entity)) ops.push(...aliasDeleteOps(alias));
      for (const groupId of await store.entityGroupIds(entity.id)) {
        const group = groups.get(groupId) ?? (await loadGroup(store, groupId));
        if (!group) continue;
        group.members.delete(entity.id);
        groups.set(groupId, group);
      }
    }
    const now = store.now();
    for (const { before, members } of groups.values()) {
      ops.push(...groupOps({ ...before, member_entity_ids: [...members], last_update_time: now, modify_index: before.modify_index + 1 }, before));
    }
    await store.apply(ops);
  });
}

async function loadGroup(store: IdentityStore, id: string) {
  const before = await store.readGroup(id);
  return before ? { before, members: new Set(before.member_entity_ids) } : undefined;
}

export interface AliasInput {
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly mount_accessor?: string | undefined;
  readonly canonical_id?: string | undefined;
  readonly custom_metadata?: Record<string, string> | undefined;
}

/**
 * Creates or updates an entity alias, as Vault's `entity-alias` does: by id, else by (mount
 * accessor, name), which finds an existing alias or makes a new one (and a new entity when no
 * `canonical_id` is given). Returns the alias, or undefined when an update by id changed nothing.
 */
export function writeAlias(store: IdentityStore, mounts: MountByAccessor, input: AliasInput): Promise<EntityAlias | undefined> {
  return store.exclusive(async () => {
    if (input.id) {
      const alias = await store.readAlias(input.id);
      if (!alias) throw new BadRequestError('invalid alias ID provided');
      if (!input.name && !input.mount_accessor && !input.canonical_id && input.custom_metadata === undefined) return undefined;
      return updateAlias(store, mounts, alias, input);
    }
    if (!input.mount_accessor || !input.name) throw new BadRequestError("'id' or 'mount_accessor' and 'name' must be provided");
    const mount = mounts(input.mount_accessor);
    if (!mount) throw new BadRequestError(`invalid mount accessor "${input.mount_accessor}"`);
    const existing = await store.aliasByFactors(input.mount_accessor, input.name);
    if (existing) return updateAlias(store, mounts, existing, input);
    return createAlias(store, mount, input.name, input.canonical_id, input.custom_metadata);
  });
}

async function createAlias(store: IdentityStore, mount: AuthMountRef, name: string, canonicalId: string | undefined, customMetadata: Record<string, string> | undefined): Promise<EntityAlias> {
  const now = store.now();
  let entity: Entity | undefined;
  if (canonicalId) {
    entity = await store.readEntity(canonicalId);
    if (!entity) throw new BadRequestError('invalid canonical ID');
    for (const alias of await store.aliasesOf(entity)) {
      if (alias.mount_accessor === mount.accessor) throw new BadRequestError('Alias already exists for requested entity and mount accessor');
    }
  }
  const newId = randomUUID();
  const owner = entity ?? newEntity(newId, `entity_${newId.slice(0, 8)}`, now);
  const alias: EntityAlias = {
    id: randomUUID(),
    canonical_id: owner.id,
    mount_accessor: mount.accessor,
    mount_type: mount.type,
    mount_path: mount.path,
    name,
    metadata: {},
    custom_metadata: customMetadata ?? {},
    creation_time: now,
    last_update_time: now,
  };
  const updated: Entity = { ...owner, aliases: [...owner.aliases, alias.id], last_update_time: now };
  await store.apply([...store.entityOps(updated, entity), put(KEYS.alias(alias.id), alias), index(KEYS.aliasIndex(mount.accessor, name), alias.id)]);
  return alias;
}

async function updateAlias(store: IdentityStore, mounts: MountByAccessor, alias: EntityAlias, input: AliasInput): Promise<EntityAlias> {
  const now = store.now();
  const accessor = input.mount_accessor || alias.mount_accessor;
  const name = input.name || alias.name;
  const mount = accessor === alias.mount_accessor ? undefined : mounts(accessor);
  if (accessor !== alias.mount_accessor && !mount) throw new BadRequestError(`invalid mount accessor "${accessor}"`);
  const current = await store.readEntity(alias.canonical_id);
  if (!current) throw new BadRequestError('given alias is not associated with an entity');
  if (mount && (await store.aliasesOf(current)).some((a) => a.id !== alias.id && a.mount_accessor === accessor)) {
    throw new BadRequestError("Alias cannot be updated as the entity already has an alias for the given 'mount_accessor' ");
  }
  if (accessor !== alias.mount_accessor || name !== alias.name) {
    if (await store.aliasByFactors(accessor, name)) throw new BadRequestError('alias with combination of mount accessor and name already exists');
  }
  let target = current;
  if (input.canonical_id && input.canonical_id !== current.id) {
    const moved = await store.readEntity(input.canonical_id);
    if (!moved) throw new BadRequestError("given 'canonical_id' is not associated with an entity");
    if ((await store.aliasesOf(moved)).some((a) => a.mount_accessor === accessor)) {
      throw new BadRequestError('Alias cannot be updated as the given entity already has an alias for this mount ');
    }
    target = moved;
  }
  const updated: EntityAlias = {
    ...alias,
    canonical_id: target.id,
    mount_accessor: accessor,
    ...(mount ? { mount_type: mount.type, mount_path: mount.path } : {}),
    name,
    ...(input.custom_metadata !== undefined ? { custom_metadata: input.custom_metadata } : {}),
    last_update_time: now,
  };
  const ops: BatchOp[] = [put(KEYS.alias(alias.id), updated)];
  if (accessor !== alias.mount_accessor || name !== alias.name) {
    ops.push({ type: 'delete', key: KEYS.aliasIndex(alias.mount_accessor, alias.name) }, index(KEYS.aliasIndex(accessor, name), alias.id));
  }
  if (target.id !== current.id) {
    ops.push(
      put(KEYS.entity(current.id), { ...current, aliases: current.aliases.filter((id) => id !== alias.id), last_update_time: now }),
      put(KEYS.entity(target.id), { ...target, aliases: [...target.aliases, alias.id], last_update_time: now }),
    );
  }
  await store.apply(ops);
  return updated;
}

/** Deletes an alias; its entity stays. False when there is no such alias. */
export function deleteAlias(store: IdentityStore, id: string): Promise<boolean> {
  return store.exclusive(async () => {
    const alias = await store.readAlias(id);
    if (!alias) return false;
    const ops = aliasDeleteOps(alias);
    const entity = await store.readEntity(alias.canonical_id);
    if (entity) ops.push(put(KEYS.entity(entity.id), { ...entity, aliases: entity.aliases.filter((a) => a !== id), last_update_time: store.now() }));
    await store.apply(ops);
    return true;
  });
}
