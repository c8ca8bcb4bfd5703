/** The identity store's records as Vault's API shows them (read, list `key_info`, lookup). */
import type { IdentityStore } from './identity-store.js';
import type { Entity, EntityAlias, Group, GroupAlias } from './records.js';
import { groupsOf } from './resolve.js';
import { BadRequestError } from '../../errors.js';

export function aliasView(alias: EntityAlias): Record<string, unknown> {
  return {
    id: alias.id,
    canonical_id: alias.canonical_id,
    name: alias.name,
    mount_accessor: alias.mount_accessor,
    mount_type: alias.mount_type,
    mount_path: alias.mount_path,
    metadata: alias.metadata,
    custom_metadata: alias.custom_metadata ?? {},
    creation_time: alias.creation_time,
    last_update_time: alias.last_update_time,
    merged_from_canonical_ids: alias.merged_from_canonical_ids ?? null,
    local: false,
    namespace_id: 'root',
  };
}

export async function entityView(store: IdentityStore, entity: Entity): Promise<Record<string, unknown>> {
  const { directGroupIds, inheritedGroupIds } = await groupsOf(store, entity.id);
  return {
    id: entity.id,
    name: entity.name,
    metadata: entity.metadata,
    policies: entity.policies ?? [],
    disabled: entity.disabled,
    aliases: (await store.aliasesOf(entity)).map(aliasView),
    creation_time: entity.creation_time,
    last_update_time: entity.last_update_time,
    merged_entity_ids: entity.merged_entity_ids ?? null,
    direct_group_ids: directGroupIds,
    group_ids: [...directGroupIds, ...inheritedGroupIds],
    inherited_group_ids: inheritedGroupIds,
    namespace_id: 'root',
  };
}

export function groupAliasView(alias: GroupAlias): Record<string, unknown> {
  return {
    id: alias.id,
    canonical_id: alias.canonical_id,
    name: alias.name,
    mount_accessor: alias.mount_accessor,
    mount_type: alias.mount_type,
    mount_path: alias.mount_path,
    metadata: null,
    creation_time: alias.creation_time,
    last_update_time: alias.last_update_time,
    merged_from_canonical_ids: null,
    namespace_id: 'root',
  };
}

export async function groupView(store: IdentityStore, group: Group): Promise<Record<string, unknown>> {
  const alias = group.alias_id ? await store.readGroupAlias(group.alias_id) : undefined;
  return {
    id: group.id,
    name: group.name,
    type: group.type,
    metadata: group.metadata,
    policies: group.policies,
    // Empty member lists are null, as Vault's stored groups answer them.
    member_entity_ids: group.member_entity_ids.length > 0 ? group.member_entity_ids : null,
    member_group_ids: group.member_group_ids.length > 0 ? group.member_group_ids : null,
    parent_group_ids: await store.parentGroupIds(group.id),
    alias: alias ? groupAliasView(alias) : {},
    creation_time: group.creation_time,
    last_update_time: group.last_update_time,
    modify_index: group.modify_index,
    namespace_id: 'root',
  };
}

/** Vault's metadata fields take a map of strings; anything else is the caller's mistake. */
export function stringMap(field: string, raw: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new BadRequestError(`failed to parse ${field}: the value of "${key}" must be a string`);
    out[key] = value;
  }
  return out;
}
