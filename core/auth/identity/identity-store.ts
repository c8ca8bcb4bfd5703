/**
 * The identity store's records: entities and their aliases (an alias keyed by mount accessor and
 * alias name), groups and their aliases. Each login finds or creates its alias and entity; alias
 * metadata is written only when it changed, so repeated logins cost no writes and take no lock.
 *
 * Every change runs under one lock (`exclusive`): a merge, a group's members or a deletion touch
 * several records, and a check (a name in use, an accessor already aliased, a cycle of groups)
 * must still hold when the records are written. Changes are rare next to reads, which take no
 * lock. On an HA cluster every write runs on the active node; reads read storage, so a standby
 * sees what the active node wrote.
 */
import { randomUUID } from 'node:crypto';
import type { BatchOp, Storage } from '../../../storage/storage.js';
import type { Clock } from '../../clock.js';
import { KeyedLock } from '../../../sdk/keyed-lock.js';
import { syncExternalGroups } from './external-groups.js';
import { KEYS, decode, index, isId, nameKey, newEntity, put, type Entity, type EntityAlias, type Group, type GroupAlias } from './records.js';

export type { Entity, EntityAlias, Group, GroupAlias } from './records.js';

export interface AliasRequest {
  readonly mountAccessor: string;
  readonly mountType: string;
  readonly mountPath: string;
  readonly name: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** The one key every change of the identity store is serialized on. */
const WRITES = 'identity';

export class IdentityStore {
  private readonly locks = new KeyedLock();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  now(): string {
    return this.clock.now().toISOString();
  }

  /** Runs a change of the identity store alone (see the file's comment). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.locks.run(WRITES, work);
  }

  /** Finds or creates the alias and its entity; returns the ids. */
  async resolveAlias(request: AliasRequest): Promise<{ entityId: string; aliasId: string }> {
    const metadata = { ...(request.metadata ?? {}) };
    const found = await this.aliasByFactors(request.mountAccessor, request.name);
    if (found && sameMap(found.metadata, metadata)) return { entityId: found.canonical_id, aliasId: found.id };
    return this.exclusive(() => this.resolveNow(request, metadata));
  }

  private async resolveNow(request: AliasRequest, metadata: Record<string, string>): Promise<{ entityId: string; aliasId: string }> {
    const now = this.now();
    const alias = await this.aliasByFactors(request.mountAccessor, request.name);
    if (alias) {
      if (!sameMap(alias.metadata, metadata)) await this.apply([put(KEYS.alias(alias.id), { ...alias, metadata, last_update_time: now })]);
      return { entityId: alias.canonical_id, aliasId: alias.id };
    }
    const entityId = randomUUID();
    const aliasId = randomUUID();
    const entity = newEntity(entityId, `entity_${entityId.slice(0, 8)}`, now, { aliases: [aliasId] });
    const created: EntityAlias = {
      id: aliasId,
      canonical_id: entityId,
      mount_accessor: request.mountAccessor,
      mount_type: request.mountType,
      mount_path: request.mountPath,
      name: request.name,
      metadata,
      creation_time: now,
      last_update_time: now,
    };
    await this.apply([
      ...this.entityOps(entity),
      put(KEYS.alias(aliasId), created),
      { type: 'put', key: KEYS.aliasIndex(request.mountAccessor, request.name), value: Buffer.from(aliasId, 'utf8') },
    ]);
    return { entityId, aliasId };
  }

  readEntity(id: string): Promise<Entity | undefined> {
    return this.read<Entity>(id, KEYS.entity);
  }

  readAlias(id: string): Promise<EntityAlias | undefined> {
    return this.read<EntityAlias>(id, KEYS.alias);
  }

  readGroup(id: string): Promise<Group | undefined> {
    return this.read<Group>(id, KEYS.group);
  }

  readGroupAlias(id: string): Promise<GroupAlias | undefined> {
    return this.read<GroupAlias>(id, KEYS.groupAlias);
  }

  /** A token's entity: the one it was issued for, or the one that entity was merged into. */
  async tokenEntity(id: string): Promise<Entity | undefined> {
    const entity = await this.readEntity(id);
    if (entity || !isId(id)) return entity;
    const into = await this.indexed(KEYS.merged(id));
    return into ? this.readEntity(into) : undefined;
  }

  async entityByName(name: string): Promise<Entity | undefined> {
    const id = await this.indexed(KEYS.entityName(name));
    if (id) return this.readEntity(id);
    // Entities made by logins before names were indexed are found by a scan until the index is built.
    if (await this.storage.get(KEYS.namesIndexed)) return undefined;
    for (const entityId of await this.listEntities()) {
      const entity = await this.readEntity(entityId);
      if (entity && nameKey(entity.name) === nameKey(name)) return entity;
    }
    return undefined;
  }

  async groupByName(name: string): Promise<Group | undefined> {
    const id = await this.indexed(KEYS.groupName(name));
    return id ? this.readGroup(id) : undefined;
  }

  async aliasByFactors(accessor: string, name: string): Promise<EntityAlias | undefined> {
    const id = await this.indexed(KEYS.aliasIndex(accessor, name));
    return id ? this.readAlias(id) : undefined;
  }

  async groupAliasByFactors(accessor: string, name: string): Promise<GroupAlias | undefined> {
    const id = await this.indexed(KEYS.groupAliasIndex(accessor, name));
    return id ? this.readGroupAlias(id) : undefined;
  }

  listEntities(): Promise<string[]> {
    return this.storage.list(KEYS.entityPrefix);
  }

  listAliases(): Promise<string[]> {
    return this.storage.list(KEYS.aliasPrefix);
  }

  listGroups(): Promise<string[]> {
    return this.storage.list(KEYS.groupPrefix);
  }

  listGroupAliases(): Promise<string[]> {
    return this.storage.list(KEYS.groupAliasPrefix);
  }

  /** The ids of the groups that list the entity as a member. */
  entityGroupIds(entityId: string): Promise<string[]> {
    return isId(entityId) ? this.storage.list(KEYS.entityGroups(entityId)) : Promise.resolve([]);
  }

  /** The ids of the groups that list the group as a member. */
  parentGroupIds(groupId: string): Promise<string[]> {
    return isId(groupId) ? this.storage.list(KEYS.groupParents(groupId)) : Promise.resolve([]);
  }

  /**
   * The writes of the name index of every entity created before it existed (none once it has
   * been written); later name lookups need no scan. A change that checks a name writes them in its
   * own batch, under `exclusive`, so a refused change writes nothing.
   */
  async nameIndexOps(): Promise<BatchOp[]> {
    if (await this.storage.get(KEYS.namesIndexed)) return [];
    const ops: BatchOp[] = [];
    for (const id of await this.listEntities()) {
      const entity = await this.readEntity(id);
      if (entity && !(await this.indexed(KEYS.entityName(entity.name)))) ops.push(index(KEYS.entityName(entity.name), entity.id));
    }
    return [...ops, { type: 'put', key: KEYS.namesIndexed, value: Buffer.from('1') }];
  }

  /** The writes that store an entity and its name index (the old name's index dropped). */
  entityOps(entity: Entity, previous?: Entity): BatchOp[] {
    const ops: BatchOp[] = [put(KEYS.entity(entity.id), entity)];
    if (previous && nameKey(previous.name) !== nameKey(entity.name)) ops.push({ type: 'delete', key: KEYS.entityName(previous.name) });
    if (!previous || nameKey(previous.name) !== nameKey(entity.name)) ops.push(index(KEYS.entityName(entity.name), entity.id));
    return ops;
  }

  /** Applies the writes of one change at once. */
  apply(ops: readonly BatchOp[]): Promise<void> {
    return ops.length === 0 ? Promise.resolve() : this.storage.batch(ops);
  }

  /**
   * Makes the entity a member of exactly the external groups that a login's group names alias on
   * its mount (external-groups.ts).
   */
  syncExternalGroups(entityId: string, accessor: string, names: readonly string[]): Promise<void> {
    return syncExternalGroups(this, entityId, accessor, names);
  }

  /** Rewrites the mount path of every alias of an auth method that moved (aliases belong to it by accessor). */
  async moveAliases(mountAccessor: string, mountPath: string): Promise<number> {
    return this.exclusive(async () => {
      let moved = 0;
      for (const [prefix, key] of [[KEYS.aliasPrefix, KEYS.alias], [KEYS.groupAliasPrefix, KEYS.groupAlias]] as const) {
        for (const id of await this.storage.list(prefix)) {
          const alias = await this.read<EntityAlias | GroupAlias>(id, key);
          if (!alias || alias.mount_accessor !== mountAccessor || alias.mount_path === mountPath) continue;
          await this.apply([put(key(alias.id), { ...alias, mount_path: mountPath, last_update_time: this.now() })]);
          moved++;
        }
      }
      return moved;
    });
  }

  /** The entity and its aliases, for ACL templating. */
  async context(entityId: string): Promise<{ entity: Entity; aliases: EntityAlias[] } | undefined> {
    const entity = await this.readEntity(entityId);
    if (!entity) return undefined;
    return { entity, aliases: await this.aliasesOf(entity) };
  }

  async aliasesOf(entity: Entity): Promise<EntityAlias[]> {
    return (await Promise.all(entity.aliases.map((id) => this.readAlias(id)))).filter((a): a is EntityAlias => a !== undefined);
  }

  private async indexed(key: string): Promise<string | undefined> {
    const raw = await this.storage.get(key);
    return raw ? Buffer.from(raw).toString('utf8') : undefined;
  }

  private async read<T>(id: string, key: (id: string) => string): Promise<T | undefined> {
    if (!isId(id)) return undefined;
    const raw = await this.storage.get(key(id));
    return raw ? decode<T>(raw) : undefined;
  }
}

function sameMap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  return ak.length === bk.length && ak.every((k) => a[k] === b[k]);
}
