/**
 * Group aliases tie an external group to a group name at an auth mount's identity provider
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/group-alias). A login whose
 * auth method answers with group aliases (a JWT's `groups_claim`) makes its entity a member of the
 * external groups aliased by those names on that mount, and no longer a member of the others
 * aliased on that mount.
 */
import { randomUUID } from 'node:crypto';
import type { BatchOp } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';
import type { IdentityStore } from './identity-store.js';
import { groupOps, index, KEYS, put, type Group, type GroupAlias, type MountByAccessor } from './records.js';

export interface GroupAliasInput {
  readonly name?: string | undefined;
  readonly mount_accessor?: string | undefined;
  readonly canonical_id?: string | undefined;
}

/**
 * Creates a group alias, or updates the one with `id`. Without `canonical_id` a new external
 * group is made for it, as in Vault.
 */
export function writeGroupAlias(store: IdentityStore, mounts: MountByAccessor, id: string | undefined, input: GroupAliasInput): Promise<GroupAlias> {
  return store.exclusive(async () => {
    const previous = id ? await store.readGroupAlias(id) : undefined;
    if (id && !previous) throw new BadRequestError('invalid group alias ID');
    const name = input.name || previous?.name;
    if (!name) throw new BadRequestError('missing alias name');
    const accessor = input.mount_accessor || previous?.mount_accessor;
    if (!accessor) throw new BadRequestError('missing mount_accessor');
    const mount = mounts(accessor);
    if (!mount) throw new BadRequestError(`invalid mount accessor "${accessor}"`);
    const now = store.now();
    const ops: BatchOp[] = [];
    let group: Group | undefined;
    const groupId = input.canonical_id || previous?.canonical_id;
    if (groupId) {
      group = await store.readGroup(groupId);
      if (!group) throw new BadRequestError("invalid group ID given in 'canonical_id'");
      if (group.type !== 'external') throw new BadRequestError("alias can't be set on an internal group");
      if (group.alias_id && group.alias_id !== previous?.id) throw new BadRequestError(`group "${group.id}" already has an alias`);
    }
    const holder = await store.groupAliasByFactors(accessor, name);
    if (holder && holder.id !== previous?.id) throw new BadRequestError('combination of mount and group alias name is already in use');
    const aliasId = previous?.id ?? randomUUID();
    if (!group) {
      const newId = randomUUID();
      group = {
        id: newId, name: `group_${newId.slice(0, 8)}`, type: 'external', metadata: null, policies: [], member_entity_ids: [], member_group_ids: [],
        alias_id: '', creation_time: now, last_update_time: now, modify_index: 0,
      };
    }
    if (previous && previous.canonical_id !== group.id) {
      const old = await store.readGroup(previous.canonical_id);
      if (old) ops.push(...groupOps({ ...old, alias_id: '', last_update_time: now, modify_index: old.modify_index + 1 }, old));
    }
    const before = await store.readGroup(group.id);
    ops.push(...groupOps({ ...group, alias_id: aliasId, last_update_time: now, modify_index: group.modify_index + 1 }, before));
    const alias: GroupAlias = {
      id: aliasId,
      canonical_id: group.id,
      mount_accessor: mount.accessor,
      mount_type: mount.type,
      mount_path: mount.path,
      name,
      creation_time: previous?.creation_time ?? now,
      last_update_time: now,
    };
    if (previous && (previous.mount_accessor !== accessor || previous.name !== name)) {
      ops.push({ type: 'delete', key: KEYS.groupAliasIndex(previous.mount_accessor, previous.name) });
    }
    ops.push(put(KEYS.groupAlias(aliasId), alias), index(KEYS.groupAliasIndex(accessor, name), aliasId));
    await store.apply(ops);
    return alias;
  });
}

/** Deletes a group alias; its group stays, without members from logins from then on. False when there is none. */
export function deleteGroupAlias(store: IdentityStore, id: string): Promise<boolean> {
  return store.exclusive(async () => {
    const alias = await store.readGroupAlias(id);
    if (!alias) return false;
    const ops: BatchOp[] = [{ type: 'delete', key: KEYS.groupAlias(alias.id) }, { type: 'delete', key: KEYS.groupAliasIndex(alias.mount_accessor, alias.name) }];
    const group = await store.readGroup(alias.canonical_id);
    if (group) ops.push(...groupOps({ ...group, alias_id: '', last_update_time: store.now(), modify_index: group.modify_index + 1 }, group));
    await store.apply(ops);
    return true;
  });
}
