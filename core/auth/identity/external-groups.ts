/**
 * External group membership from logins: a login's group names (an auth method's group aliases)
 * make its entity a member of exactly the external groups those names alias on its mount, as Vault
 * does. Apart from group-aliases.ts so that the identity store can call it without an import circle.
 */
import type { BatchOp } from '../../../storage/storage.js';
import { groupOps, type Group, type GroupAlias } from './records.js';

/** What membership changes read and write: the identity store's methods. */
export interface ExternalGroupStore {
  now(): string;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  apply(ops: readonly BatchOp[]): Promise<void>;
  groupAliasByFactors(accessor: string, name: string): Promise<GroupAlias | undefined>;
  readGroup(id: string): Promise<Group | undefined>;
  readGroupAlias(id: string): Promise<GroupAlias | undefined>;
  entityGroupIds(entityId: string): Promise<string[]>;
}

/**
 * Makes the entity a member of exactly the external groups that the login's group names alias on
 * its mount. Takes the write lock only when membership changes, so repeated logins cost no writes.
 */
export async function syncExternalGroups(store: ExternalGroupStore, entityId: string, accessor: string, names: readonly string[]): Promise<void> {
  const plan = await membershipChanges(store, entityId, accessor, names);
  if (plan.join.length === 0 && plan.leave.length === 0) return;
  await store.exclusive(async () => {
    const { join, leave } = await membershipChanges(store, entityId, accessor, names);
    const now = store.now();
    const ops: BatchOp[] = [];
    for (const group of join) {
      ops.push(...groupOps({ ...group, member_entity_ids: [...group.member_entity_ids, entityId], last_update_time: now, modify_index: group.modify_index + 1 }, group));
    }
    for (const group of leave) {
      const members = group.member_entity_ids.filter((id) => id !== entityId);
      ops.push(...groupOps({ ...group, member_entity_ids: members, last_update_time: now, modify_index: group.modify_index + 1 }, group));
    }
    await store.apply(ops);
  });
}

async function membershipChanges(store: ExternalGroupStore, entityId: string, accessor: string, names: readonly string[]): Promise<{ join: Group[]; leave: Group[] }> {
  const wanted = new Map<string, Group>();
  for (const name of new Set(names)) {
    const alias = await store.groupAliasByFactors(accessor, name);
    const group = alias ? await store.readGroup(alias.canonical_id) : undefined;
    if (group?.type === 'external') wanted.set(group.id, group);
  }
  const join = [...wanted.values()].filter((g) => !g.member_entity_ids.includes(entityId));
  const leave: Group[] = [];
  for (const groupId of await store.entityGroupIds(entityId)) {
    if (wanted.has(groupId)) continue;
    const group = await store.readGroup(groupId);
    if (group?.type !== 'external' || !group.alias_id) continue;
    const alias = await store.readGroupAlias(group.alias_id);
    if (alias?.mount_accessor === accessor) leave.push(group);
  }
  return { join, leave };
}
