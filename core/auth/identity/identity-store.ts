/**
 * A minimal identity store: entities and their aliases, an alias keyed by (mount accessor, alias
 * name). Each login finds or creates its alias and entity; alias metadata is written only when it
 * changed, so repeated logins cost no writes.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Storage } from '../../../storage/storage.js';
import type { Clock } from '../../clock.js';

/** Storage keys (behind the barrier). */
const KEYS = {
  entity: (id: string) => `sys/identity/entity/${id}`,
  entityPrefix: 'sys/identity/entity/',
  alias: (id: string) => `sys/identity/alias/${id}`,
  aliasPrefix: 'sys/identity/alias/',
  // Hash of (mount accessor, alias name) → alias id: a login finds its alias without a scan.
  aliasIndex: (accessor: string, name: string) =>
    `sys/identity/alias-index/${createHash('sha256').update(accessor).update('\0').update(name).digest('hex')}`,
} as const;

export interface Entity {
  readonly id: string;
  readonly name: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly aliases: readonly string[];
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
  readonly creation_time: string;
  readonly last_update_time: string;
}

export interface AliasRequest {
  readonly mountAccessor: string;
  readonly mountType: string;
  readonly mountPath: string;
  readonly name: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export class IdentityStore {
  /** Serializes resolutions per alias key, so two concurrent logins cannot create two entities. */
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** Finds or creates the alias and its entity; returns the ids. */
  async resolveAlias(request: AliasRequest): Promise<{ entityId: string; aliasId: string }> {
    const indexKey = KEYS.aliasIndex(request.mountAccessor, request.name);
    const previous = this.pending.get(indexKey) ?? Promise.resolve();
    const run = previous.then(() => this.resolveNow(indexKey, request), () => this.resolveNow(indexKey, request));
    const tail = run.catch(() => undefined);
    this.pending.set(indexKey, tail);
    void tail.then(() => {
      if (this.pending.get(indexKey) === tail) this.pending.delete(indexKey);
    });
    return run;
  }

  private async resolveNow(indexKey: string, request: AliasRequest): Promise<{ entityId: string; aliasId: string }> {
    const now = this.clock.now().toISOString();
    const metadata = { ...(request.metadata ?? {}) };
    const indexed = await this.storage.get(indexKey);
    if (indexed) {
      const aliasId = Buffer.from(indexed).toString('utf8');
      const alias = await this.readAlias(aliasId);
      if (alias) {
        if (!sameMap(alias.metadata, metadata)) {
          await this.write(KEYS.alias(alias.id), { ...alias, metadata, last_update_time: now });
        }
        return { entityId: alias.canonical_id, aliasId: alias.id };
      }
    }
    const entityId = randomUUID();
    const aliasId = randomUUID();
    const entity: Entity = {
      id: entityId,
      name: `entity_${entityId.slice(0, 8)}`,
      metadata: null,
      aliases: [aliasId],
      creation_time: now,
      last_update_time: now,
      disabled: false,
    };
    const alias: EntityAlias = {
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
    await this.storage.batch([
      { type: 'put', key: KEYS.entity(entityId), value: encode(entity) },
      { type: 'put', key: KEYS.alias(aliasId), value: encode(alias) },
      { type: 'put', key: indexKey, value: Buffer.from(aliasId, 'utf8') },
    ]);
    return { entityId, aliasId };
  }

  async readEntity(id: string): Promise<Entity | undefined> {
    return this.read<Entity>(KEYS.entity(id));
  }

  async readAlias(id: string): Promise<EntityAlias | undefined> {
    return this.read<EntityAlias>(KEYS.alias(id));
  }

  listEntities(): Promise<string[]> {
    return this.storage.list(KEYS.entityPrefix);
  }

  listAliases(): Promise<string[]> {
    return this.storage.list(KEYS.aliasPrefix);
  }

  /** Rewrites the mount path of every alias of an auth method that moved (aliases belong to it by accessor). */
  async moveAliases(mountAccessor: string, mountPath: string): Promise<number> {
    let moved = 0;
    for (const id of await this.listAliases()) {
      const alias = await this.readAlias(id);
      if (!alias || alias.mount_accessor !== mountAccessor || alias.mount_path === mountPath) continue;
      await this.write(KEYS.alias(alias.id), { ...alias, mount_path: mountPath, last_update_time: this.clock.now().toISOString() });
      moved++;
    }
    return moved;
  }

  /** The entity and its aliases, for ACL templating. */
  async context(entityId: string): Promise<{ entity: Entity; aliases: EntityAlias[] } | undefined> {
    const entity = await this.readEntity(entityId);
    if (!entity) return undefined;
    const aliases = (await Promise.all(entity.aliases.map((id) => this.readAlias(id)))).filter((a): a is EntityAlias => a !== undefined);
    return { entity, aliases };
  }

  private async read<T>(key: string): Promise<T | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(key.slice(key.lastIndexOf('/') + 1))) return undefined;
    const raw = await this.storage.get(key);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as T) : undefined;
  }

  private async write(key: string, value: unknown): Promise<void> {
    await this.storage.put(key, encode(value));
  }
}

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function sameMap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  return ak.length === bk.length && ak.every((k) => a[k] === b[k]);
}
