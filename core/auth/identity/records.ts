/**
 * The identity store's records and where they are kept (behind the barrier). Entities, groups and
 * their aliases are stored by id; the indexes below let a name, a login or a membership be found
 * without a scan.
 */
import { createHash } from 'node:crypto';
import type { BatchOp } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';

const hash = (...parts: string[]) => {
  const digest = createHash('sha256');
  parts.forEach((part, i) => digest.update(i === 0 ? part : `\0${part}`));
  return digest.digest('hex');
};

/**
 * Names are compared without case, as Vault's identity store does by default
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/entity): "Bob" and "bob" are one entity.
 */
export const nameKey = (name: string) => name.toLowerCase();

export const KEYS = {
  entity: (id: string) => `sys/identity/entity/${id}`,
  entityPrefix: 'sys/identity/entity/',
  // Entity name → id, so create-by-name and lookups by name find the entity without a scan.
  entityName: (name: string) => `sys/identity/entity-name/${hash(nameKey(name))}`,
  // A merged-away entity's id → the entity it was merged into: its tokens act as that entity.
  merged: (id: string) => `sys/identity/merged/${id}`,
  alias: (id: string) => `sys/identity/alias/${id}`,
  aliasPrefix: 'sys/identity/alias/',
  // Hash of (mount accessor, alias name) → alias id: a login finds its alias without a scan.
  aliasIndex: (accessor: string, name: string) => `sys/identity/alias-index/${hash(accessor, name)}`,
  group: (id: string) => `sys/identity/group/${id}`,
  groupPrefix: 'sys/identity/group/',
  groupName: (name: string) => `sys/identity/group-name/${hash(nameKey(name))}`,
  groupAlias: (id: string) => `sys/identity/group-alias/${id}`,
  groupAliasPrefix: 'sys/identity/group-alias/',
  groupAliasIndex: (accessor: string, name: string) => `sys/identity/group-alias-index/${hash(accessor, name)}`,
  // Reverse membership, one empty record per (member, group): an entity's groups, and a group's
  // parents, are a listing away when a token's policies are computed.
  entityGroups: (entityId: string) => `sys/identity/member-of/entity/${entityId}/`,
  groupParents: (groupId: string) => `sys/identity/member-of/group/${groupId}/`,
  // Written once every entity created before the name index existed has its index record.
  namesIndexed: 'sys/identity/names-indexed',
} as const;

export interface Entity {
  readonly id: string;
  readonly name: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly policies?: readonly string[];
  readonly aliases: readonly string[];
  readonly merged_entity_ids?: readonly string[];
  readonly creation_time: string;
  readonly last_update_time: string;
  readonly disabled: boolean;
}

export interface EntityAlias {
  readonly id: string;
  readonly canonical_id: string;
  readonly mount_accessor: string;
  readonly mount_type: string;
  readonly mount_path: string;
  readonly name: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly custom_metadata?: Readonly<Record<string, string>>;
  readonly merged_from_canonical_ids?: readonly string[];
  readonly creation_time: string;
  readonly last_update_time: string;
}

export type GroupType = 'internal' | 'external';

export interface Group {
  readonly id: string;
  readonly name: string;
  readonly type: GroupType;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly policies: readonly string[];
  readonly member_entity_ids: readonly string[];
  readonly member_group_ids: readonly string[];
  /** The external group's alias id, '' when it has none. */
  readonly alias_id: string;
  readonly creation_time: string;
  readonly last_update_time: string;
  readonly modify_index: number;
}

export interface GroupAlias {
  readonly id: string;
  readonly canonical_id: string;
  readonly mount_accessor: string;
  readonly mount_type: string;
  readonly mount_path: string;
  readonly name: string;
  readonly creation_time: string;
  readonly last_update_time: string;
}

/** An auth mount as the identity store needs it: aliases name their mount by accessor. */
export interface AuthMountRef {
  readonly accessor: string;
  readonly type: string;
  readonly path: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether an id can name a record: ids are UUIDs, so a request's id never reaches another key. */
export function isId(id: string): boolean {
  return UUID.test(id);
}

export function encode(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decode<T>(raw: Uint8Array): T {
  return JSON.parse(Buffer.from(raw).toString('utf8')) as T;
}

/** Policies as Vault keeps them on an entity or group: lower-cased, once each, never root. */
export function identityPolicyList(policies: readonly string[]): string[] {
  const list = [...new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))];
  if (list.includes('root')) throw new BadRequestError('policies cannot contain root');
  return list;
}

/** A new entity with Vault's defaults. */
export function newEntity(id: string, name: string, now: string, fields: Partial<Entity> = {}): Entity {
  return { id, name, metadata: null, policies: [], aliases: [], creation_time: now, last_update_time: now, disabled: false, ...fields };
}

/** The writes that delete an entity alias and its index record. */
export function aliasDeleteOps(alias: EntityAlias): BatchOp[] {
  return [
    { type: 'delete', key: KEYS.alias(alias.id) },
    { type: 'delete', key: KEYS.aliasIndex(alias.mount_accessor, alias.name) },
  ];
}

export function put(key: string, value: unknown): BatchOp {
  return { type: 'put', key, value: encode(value) };
}

export function index(key: string, id: string): BatchOp {
  return { type: 'put', key, value: Buffer.from(id, 'utf8') };
}

/** The auth mount with an accessor, when there is one. */
export type MountByAccessor = (accessor: string) => AuthMountRef | undefined;

/** The value of a reverse membership record: its key says everything. */
const MARK = new Uint8Array(0);

/**
 * The writes that store a group: its record, its name index and the reverse membership records
 * of members added or removed since `previous`.
 */
export function groupOps(group: Group, previous?: Group): BatchOp[] {
  const ops: BatchOp[] = [put(KEYS.group(group.id), group)];
  if (previous && nameKey(previous.name) !== nameKey(group.name)) ops.push({ type: 'delete', key: KEYS.groupName(previous.name) });
  if (!previous || nameKey(previous.name) !== nameKey(group.name)) ops.push(index(KEYS.groupName(group.name), group.id));
  const diff = (before: readonly string[], after: readonly string[], key: (id: string) => string) => {
    for (const id of after) if (!before.includes(id)) ops.push({ type: 'put', key: key(id) + group.id, value: MARK });
    for (const id of before) if (!after.includes(id)) ops.push({ type: 'delete', key: key(id) + group.id });
  };
  diff(previous?.member_entity_ids ?? [], group.member_entity_ids, KEYS.entityGroups);
  diff(previous?.member_group_ids ?? [], group.member_group_ids, KEYS.groupParents);
  return ops;
}
