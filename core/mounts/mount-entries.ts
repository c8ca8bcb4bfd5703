/**
 * The two mount tables as stored behind the barrier. What is held is never changed: a change makes
 * a new list from the current one, stores it, and only then holds it, as Vault's vault/mount.go
 * clones the table, persists the clone and swaps it in. A change that cannot be stored therefore
 * changes nothing, and there is nothing to roll back. Changes are serialized by the caller (the
 * mount table runs one operation at a time).
 */
import type { Storage } from '../../storage/storage.js';
import { defaultMountConfig, type MountEntry, type MountTableName } from './mount-entry.js';

/** Storage keys of the two tables (behind the barrier). */
export const MOUNT_TABLE_KEYS: Readonly<Record<MountTableName, string>> = {
  // The secrets-engine table, JSON `{ entries: MountEntry[] }`.
  secret: 'core/mounts',
  // The auth-method table, same shape.
  auth: 'core/auth',
};

export const MOUNT_TABLES: readonly MountTableName[] = ['secret', 'auth'];

export type StoredTables = Readonly<Record<MountTableName, readonly MountEntry[]>>;

const EMPTY: StoredTables = Object.freeze({ secret: Object.freeze([]), auth: Object.freeze([]) });

export class MountEntries {
  private tables: StoredTables = EMPTY;

  constructor(private readonly storage: Storage) {}

  /** A table's entries as held now, sorted by path. */
  list(table: MountTableName): readonly MountEntry[] {
    return this.tables[table];
  }

  /** Both tables as stored now (another node may have changed them), without holding them. */
  async read(): Promise<StoredTables> {
    const [secret, auth] = await Promise.all(MOUNT_TABLES.map((table) => this.readTable(table)));
    return { secret: secret!, auth: auth! };
  }

  /** Holds tables read from storage (load, or another node's change): nothing is written. */
  adopt(tables: StoredTables): void {
    this.tables = { secret: Object.freeze(sortedByPath(tables.secret)), auth: Object.freeze(sortedByPath(tables.auth)) };
  }

  /** Forgets what is held (seal). */
  clear(): void {
    this.tables = EMPTY;
  }

  /**
   * Changes one table: `next` makes the new list from the current one, which is stored and then
   * held. Throws what storing throws, and then nothing changed.
   */
  async change(table: MountTableName, next: (current: readonly MountEntry[]) => readonly MountEntry[]): Promise<void> {
    const entries = Object.freeze(sortedByPath(next(this.tables[table])));
    await this.storage.put(MOUNT_TABLE_KEYS[table], Buffer.from(JSON.stringify({ entries }), 'utf8'));
    this.tables = { ...this.tables, [table]: entries };
  }

  private async readTable(table: MountTableName): Promise<readonly MountEntry[]> {
    const raw = await this.storage.get(MOUNT_TABLE_KEYS[table]);
    if (!raw) return [];
    const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { entries: MountEntry[] };
    return parsed.entries.map((e) => Object.freeze({ ...e, table, config: { ...defaultMountConfig(), ...e.config } }));
  }
}

function sortedByPath(entries: readonly MountEntry[]): MountEntry[] {
  return [...entries].sort((a, b) => a.path.localeCompare(b.path));
}
