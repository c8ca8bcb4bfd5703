/**
 * What an entity's groups give it: the groups that list it (direct), the groups that list those,
 * and so on (inherited), and the policies of the entity and of all those groups. Vault adds these
 * "identity policies" to a token's own at every request
 * (https://developer.hashicorp.com/vault/docs/concepts/identity#policies). Membership is walked
 * through the reverse index with a visited set, so a cycle written around the checks still ends.
 */
import type { IdentityStore } from './identity-store.js';
import type { Entity, Group } from './records.js';

export interface EntityGroups {
  readonly directGroupIds: string[];
  readonly inheritedGroupIds: string[];
  /** Every group found, direct and inherited. */
  readonly groups: Group[];
  /** The groups' policies, each once, in the order found. */
  readonly groupPolicies: string[];
}

export async function groupsOf(store: IdentityStore, entityId: string): Promise<EntityGroups> {
  const directGroupIds = await store.entityGroupIds(entityId);
  const seen = new Set<string>(directGroupIds);
  const inheritedGroupIds: string[] = [];
  const policies = new Set<string>();
  const groups: Group[] = [];
  const pending = [...directGroupIds];
  while (pending.length > 0) {
    const id = pending.shift()!;
    const group = await store.readGroup(id);
    if (!group) continue;
    groups.push(group);
    for (const policy of group.policies) policies.add(policy);
    for (const parent of await store.parentGroupIds(id)) {
      if (seen.has(parent)) continue;
      seen.add(parent);
      inheritedGroupIds.push(parent);
      pending.push(parent);
    }
  }
  return { directGroupIds, inheritedGroupIds, groups, groupPolicies: [...policies] };
}

export interface IdentityPolicies {
  /** The token's entity (the one it was merged into, if it was); undefined when deleted. */
  readonly entity: Entity | undefined;
  /** The entity's groups, direct and inherited. */
  readonly groups: Group[];
  /** The entity's policies and its groups', each once. */
  readonly policies: string[];
}

/** The identity policies of a token's entity. */
export async function identityPolicies(store: IdentityStore, entityId: string): Promise<IdentityPolicies> {
  const entity = entityId ? await store.tokenEntity(entityId) : undefined;
  if (!entity) return { entity: undefined, groups: [], policies: [] };
  const { groups, groupPolicies } = await groupsOf(store, entity.id);
  return { entity, groups, policies: [...new Set([...(entity.policies ?? []), ...groupPolicies])] };
}
