/**
 * Identity groups (https://developer.hashicorp.com/vault/api-docs/secret/identity/group): an
 * internal group lists its member entities and member groups; an external group's members come
 * from logins, through its group alias on an auth mount (group-aliases.ts). A group's policies
 * apply to every entity in it and in its member groups, transitively (resolve.ts).
 */
import { randomUUID } from 'node:crypto';
import type { BatchOp } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';
import type { IdentityStore } from './identity-store.js';
import { groupOps, identityPolicyList, KEYS, put, type Group, type GroupType } from './records.js';


export interface GroupInput {
  readonly name?: string | undefined;
  readonly type?: string | undefined;
  readonly metadata?: Record<string, string> | undefined;
  readonly policies?: readonly string[] | undefined;
  readonly member_entity_ids?: readonly string[] | undefined;
  readonly member_group_ids?: readonly string[] | undefined;
}

/** How a write finds the group it changes: by id (which must exist), by name, or none (new). */
export type GroupTarget = { readonly id: string } | { readonly name: string } | undefined;

/** Creates or updates a group; returns it and whether it is new. Fields not sent keep their values. */
export function writeGroup(store: IdentityStore, target: GroupTarget, input: GroupInput): Promise<{ group: Group; created: boolean }> {
  return store.exclusive(async () => {
    let previous: Group | undefined;
    if (target && 'id' in target) {
      previous = await store.readGroup(target.id);
      if (!previous) throw new BadRequestError('invalid group ID');
    } else if (target) {
      previous = await store.groupByName(target.name);
    }
    const type = groupType(previous?.type, input.type);
    const now = store.now();
    const id = previous?.id ?? randomUUID();
    const name = input.name || previous?.name || `group_${id.slice(0, 8)}`;
    const named = await store.groupByName(name);
    if (named && named.id !== id) throw new BadRequestError('group name is already in use');
    if (type === 'external' && input.member_entity_ids !== undefined && input.member_entity_ids.length > 0) {
      throw new BadRequestError("member entities can't be set manually for external groups");
    }
    if (type === 'external' && input.member_group_ids !== undefined && input.member_group_ids.length > 0) {
      throw new BadRequestError("member groups can't be set for external groups");
    }
    const memberEntities = type === 'internal' && input.member_entity_ids !== undefined ? [...new Set(input.member_entity_ids)] : undefined;
    for (const entityId of memberEntities ?? []) {
      if (!(await store.readEntity(entityId))) throw new BadRequestError(`invalid member entity ID "${entityId}"`);
    }
    const memberGroups = type === 'internal' && input.member_group_ids !== undefined ? [...new Set(input.member_group_ids)] : undefined;
    for (const memberId of memberGroups ?? []) await checkMemberGroup(store, id, memberId);
    const group: Group = {
      id,
      name,
      type,
      metadata: input.metadata ?? previous?.metadata ?? null,
      policies: input.policies !== undefined ? identityPolicyList(input.policies) : (previous?.policies ?? []),
      member_entity_ids: memberEntities ?? previous?.member_entity_ids ?? [],
      member_group_ids: memberGroups ?? previous?.member_group_ids ?? [],
      alias_id: previous?.alias_id ?? '',
      creation_time: previous?.creation_time ?? now,
      last_update_time: now,
      modify_index: (previous?.modify_index ?? 0) + 1,
    };
    await store.apply(groupOps(group, previous));
    return { group, created: previous === undefined };
  });
}

function groupType(current: GroupType | undefined, requested: string | undefined): GroupType {
  if (requested && current && requested !== current) throw new BadRequestError('group type cannot be changed');
  const type = requested || current || 'internal';
  if (type !== 'internal' && type !== 'external') throw new BadRequestError(`invalid group type "${type}"`);
  return type;
}

/**
 * A member group must exist and must not contain the group, directly or through its own
 * members: a cycle would make every group on it inherit every other's policies.
 */
async function checkMemberGroup(store: IdentityStore, groupId: string, memberId: string): Promise<void> {
  if (memberId === groupId) throw new BadRequestError(`member group ID "${memberId}" is same as the ID of the group`);
  const member = await store.readGroup(memberId);
  if (!member) throw new BadRequestError(`invalid member group ID "${memberId}"`);
  const seen = new Set<string>();
  const pending = [...member.member_group_ids];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (id === groupId) throw new BadRequestError(`cyclic relationship detected for member group ID "${memberId}"`);
    if (seen.has(id)) continue;
    seen.add(id);
    pending.push(...((await store.readGroup(id))?.member_group_ids ?? []));
  }
}

/** Deletes a group, its alias and its memberships (as a member of other groups, too); nothing when it is gone already. */
export function deleteGroup(store: IdentityStore, group: Group): Promise<void> {
  return store.exclusive(async () => {
    const current = await store.readGroup(group.id);
    if (!current) return;
    const now = store.now();
    const ops: BatchOp[] = [
      { type: 'delete', key: KEYS.group(current.id) },
      { type: 'delete', key: KEYS.groupName(current.name) },
      ...current.member_entity_ids.map((id): BatchOp => ({ type: 'delete', key: KEYS.entityGroups(id) + current.id })),
      ...current.member_group_ids.map((id): BatchOp => ({ type: 'delete', key: KEYS.groupParents(id) + current.id })),
    ];
    for (const parentId of await store.parentGroupIds(current.id)) {
      const parent = await store.readGroup(parentId);
      ops.push({ type: 'delete', key: KEYS.groupParents(current.id) + parentId });
      if (!parent) continue;
      ops.push(put(KEYS.group(parent.id), {
        ...parent,
        member_group_ids: parent.member_group_ids.filter((id) => id !== current.id),
        last_update_time: now,
        modify_index: parent.modify_index + 1,
      }));
    }
    const alias = current.alias_id ? await store.readGroupAlias(current.alias_id) : undefined;
    if (alias) {
      ops.push({ type: 'delete', key: KEYS.groupAlias(alias.id) }, { type: 'delete', key: KEYS.groupAliasIndex(alias.mount_accessor, alias.name) });
    }
    await store.apply(ops);
  });
}
