/**
 * Physical-storage tools for the reliability suite: a snapshot of every stored entry (to prove a
 * failed request changed nothing), and a store that fails on demand the way LevelDB does when the
 * disk is full or the database errors.
 */
import { createHash } from 'node:crypto';
import { UnavailableError } from '../../../core/errors.js';
import type { BatchOp, PhysicalStorage, Storage, StoredEntry } from '../../../storage/storage.js';

/** Key → SHA-256 of the value (hex), for every entry under the root. */
export type Snapshot = ReadonlyMap<string, string>;

export async function snapshot(storage: Storage): Promise<Snapshot> {
  const out = new Map<string, string>();
  const walk = async (prefix: string): Promise<void> => {
    for (const child of await storage.list(prefix)) {
      const key = prefix + child;
      if (child.endsWith('/')) {
        await walk(key);
        continue;
      }
      const value = await storage.get(key);
      if (value !== undefined) out.set(key, createHash('sha256').update(value).digest('hex'));
    }
  };
  await walk('');
  return out;
}

/** What differs between two snapshots, one line per key; empty when equal. */
export function diffSnapshots(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const [key, digest] of before) {
    if (!after.has(key)) out.push(`deleted ${key}`);
    else if (after.get(key) !== digest) out.push(`changed ${key}`);
  }
  for (const key of after.keys()) if (!before.has(key)) out.push(`added ${key}`);
  return out;
}

/** What the wrapped store's own error would carry: an OS-level text that must never reach a client. */
export const FAULT_DETAIL = 'IO error: /var/lib/keywarden/000042.log: No space left on device (ENOSPC)';

export type FaultMode =
  /** Everything works. */
  | { readonly kind: 'none' }
  /** Writes (put, delete, batch) fail; reads work: a full disk. */
  | { readonly kind: 'writes' }
  /** Every operation fails: the database is broken or gone. */
  | { readonly kind: 'all' }
  /** The next `allowed` writes succeed, then writes fail: a disk filling up in the middle of a request. */
  | { readonly kind: 'writes-after'; allowed: number };

/**
 * A physical store that fails on demand. Failures look exactly like LevelDbStorage's own: an
 * UnavailableError with a neutral message and the low-level cause (with a file path) attached.
 */
export class FaultyStorage implements PhysicalStorage {
  readonly kind: string;
  private mode: FaultMode = { kind: 'none' };
  /** How many operations were refused since the store was created. */
  refused = 0;
  /** Successful writes (put, delete, batch) since the store was created. */
  writes = 0;

  constructor(private inner: PhysicalStorage) {
    this.kind = inner.kind;
  }

  /** Puts another store underneath (the database came back after being lost); returns the old one. */
  swap(inner: PhysicalStorage): PhysicalStorage {
    const old = this.inner;
    this.inner = inner;
    return old;
  }

  /** The store underneath, for snapshots that must not be refused. */
  get underlying(): PhysicalStorage {
    return this.inner;
  }

  fail(mode: FaultMode): void {
    this.mode = mode.kind === 'writes-after' ? { ...mode } : mode;
  }

  heal(): void {
    this.mode = { kind: 'none' };
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    this.check('read', false);
    return this.inner.get(key);
  }

  async list(prefix: string): Promise<string[]> {
    this.check('list', false);
    return this.inner.list(prefix);
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    this.check('write', true);
    await this.inner.put(key, value);
    this.writes++;
  }

  async delete(key: string): Promise<void> {
    this.check('delete', true);
    await this.inner.delete(key);
    this.writes++;
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    this.check('batch write', true);
    await this.inner.batch(ops);
    this.writes++;
  }

  entries(): AsyncIterable<StoredEntry> {
    this.check('read', false);
    return this.inner.entries();
  }

  async replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number> {
    this.check('batch write', true);
    const written = await this.inner.replaceAll(entries);
    this.writes++;
    return written;
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private check(what: string, write: boolean): void {
    const mode = this.mode;
    let refuse = false;
    if (mode.kind === 'all') refuse = true;
    else if (mode.kind === 'writes') refuse = write;
    else if (mode.kind === 'writes-after' && write) {
      if (mode.allowed > 0) mode.allowed--;
      else refuse = true;
    }
    if (!refuse) return;
    this.refused++;
    const cause = Object.assign(new Error(FAULT_DETAIL), { code: 'LEVEL_IO_ERROR' });
    throw new UnavailableError(`storage ${what} failed`, { cause });
  }
}
