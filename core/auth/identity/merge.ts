/**
 * `entity/merge`: the from-entities' aliases move to the to-entity, their groups list it instead,
 * and they are deleted; their tokens act as the to-entity from their next use
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/entity#merge-entities).
 *
 * An entity has at most one alias per auth mount. When a from-entity and the to-entity both have
 * one on the same mount, the merge is refused unless `conflicting_alias_ids_to_keep` names the
 * alias to keep (the other is deleted); one from-entity at a time then, as in Vault.
 */
import type { BatchOp } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';
import type { IdentityStore } from './identity-store.js';
import { groupOps, aliasDeleteOps, index, KEYS, put, type Entity, type EntityAlias, type Group } from './records.js';

export interface MergeRequest {
  readonly toEntityId: string;
  readonly fromEntityIds: readonly string[];
  readonly conflictingAliasIdsToKeep: readonly string[];
}

export function mergeEntities(store: IdentityStore, request: MergeRequest): Promise<void> {
  return store.exclusive(async () => {
    const keep = request.conflictingAliasIdsToKeep;
    const to = await store.readEntity(request.toEntityId);
    if (!to) throw new BadRequestError('entity id to merge to is invalid');
    const fromIds = [...new Set(request.fromEntityIds)];
    if (fromIds.length === 0) throw new BadRequestError('missing entity ids to merge from');
    if (fromIds.length > 1 && keep.length > 1) {
      throw new BadRequestError('aliases conflicts cannot be resolved with multiple from entity ids - merge one entity at a time');
    }
    const froms: { entity: Entity; aliases: EntityAlias[] }[] = [];
    for (const id of fromIds) {
      if (id === to.id) throw new BadRequestError('to_entity_id should not be present in from_entity_ids');
      const entity = await store.readEntity(id);
      if (!entity) throw new BadRequestError('entity id to merge from is invalid');
      froms.push({ entity, aliases: await store.aliasesOf(entity) });
    }
    let toAliases = await store.aliasesOf(to);
    if (keep.length === 0) refuseClashes(to, toAliases, froms);

    const now = store.now();
    const ops: BatchOp[] = [];
    const groups = new Map<string, { before: Group; members: Set<string> }>();
    let merged: Entity = { ...to };
    for (const from of froms) {
      for (const alias of from.aliases) {
        const clash = toAliases.find((a) => a.mount_accessor === alias.mount_accessor);
        if (clash && keep.includes(clash.id)) {
          ops.push(...aliasDeleteOps(alias));
          continue;
        }
        if (clash && !keep.includes(alias.id)) {
          throw new BadRequestError(
            `conflicting mount accessors in following alias IDs and neither were present in conflicting_alias_ids_to_keep: ${alias.id}, ${clash.id}`,
          );
        }
        if (clash) {
          ops.push(...aliasDeleteOps(clash));
          toAliases = toAliases.filter((a) => a.id !== clash.id);
          merged = { ...merged, aliases: merged.aliases.filter((id) => id !== clash.id) };
        }
        const moved: EntityAlias = {
          ...alias,
          canonical_id: to.id,
          merged_from_canonical_ids: [...(alias.merged_from_canonical_ids ?? []), from.entity.id],
          last_update_time: now,
        };
        ops.push(put(KEYS.alias(alias.id), moved));
        toAliases = [...toAliases, moved];
        merged = { ...merged, aliases: [...merged.aliases, alias.id] };
      }
      const mergedIds = [...(from.entity.merged_entity_ids ?? []), from.entity.id];
      merged = { ...merged, merged_entity_ids: [...(merged.merged_entity_ids ?? []), ...mergedIds] };
      // Tokens of the merged entities (and of those merged into them before) act as the to-entity.
      for (const id of mergedIds) ops.push(index(KEYS.merged(id), to.id));
      ops.push({ type: 'delete', key: KEYS.entity(from.entity.id) }, { type: 'delete', key: KEYS.entityName(from.entity.name) });
      for (const groupId of await store.entityGroupIds(from.entity.id)) {
        const group = groups.get(groupId) ?? (await store.readGroup(groupId).then((g) => (g ? { before: g, members: new Set(g.member_entity_ids) } : undefined)));
        if (!group) continue;
        group.members.delete(from.entity.id);
        group.members.add(to.id);
        groups.set(groupId, group);
      }
    }
    ops.push(put(KEYS.entity(to.id), { ...merged, last_update_time: now }));
    for (const { before, members } of groups.values()) {
      ops.push(...groupOps({ ...before, member_entity_ids: [...members], last_update_time: now, modify_index: before.modify_index + 1 }, before));
    }
    await store.apply(ops);
  });
}

/** Refuses a merge in which a from-entity and the to-entity have aliases on one mount, naming them all. */
function refuseClashes(to: Entity, toAliases: readonly EntityAlias[], froms: readonly { entity: Entity; aliases: EntityAlias[] }[]): void {
  const fromByAccessor = new Map<string, string>();
  const clashes: string[] = [];
  for (const from of froms) {
    for (const alias of from.aliases) {
      const other = fromByAccessor.get(alias.mount_accessor);
      if (other !== undefined && other !== from.entity.id) {
        throw new BadRequestError(`mount accessor ${alias.mount_accessor} found in multiple fromEntities, merge should be done with one fromEntity at a time`);
      }
      fromByAccessor.set(alias.mount_accessor, from.entity.id);
      const clash = toAliases.find((a) => a.mount_accessor === alias.mount_accessor);
      if (clash) {
        clashes.push(
          `mountAccessor: ${alias.mount_accessor}, toEntity ID: ${to.id}, fromEntity ID: ${from.entity.id}, ` +
            `conflicting toEntity alias ID: ${clash.id}, conflicting fromEntity alias ID: ${alias.id}`,
        );
      }
    }
  }
  if (clashes.length > 0) {
    throw new BadRequestError(
      `toEntity and at least one fromEntity have aliases with the same mount accessor, repeat the merge request specifying exactly one fromEntity, clashes: ${clashes.join('; ')}`,
    );
  }
}
