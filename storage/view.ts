import { BadRequestError } from '../core/errors.js';
import type { BatchOp, Storage } from './storage.js';

/** How many deletes `deletePrefix` sends per batch: bounded so one huge mount never builds one huge write. */
const DELETE_CHUNK = 500;

/**
 * A window onto `parent` under a fixed prefix (`logical/<uuid>/`), handed to a mount so it sees
 * only its own keys. Keys are relative to the prefix; a `..` segment is refused so a key can never
 * name something outside the window — not here, and not in a backend that later resolves paths.
 */
export class StorageView implements Storage {
  /** @param prefix non-empty and ending in `/`, e.g. `logical/<uuid>/`. */
  constructor(private readonly parent: Storage, readonly prefix: string) {
    if (prefix === '' || !prefix.endsWith('/')) {
      throw new BadRequestError(`storage view prefix "${prefix}" must be non-empty and end with "/"`);
    }
    checkKey(prefix);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.parent.get(this.expand(key));
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    return this.parent.put(this.expand(key), value);
  }

  async delete(key: string): Promise<void> {
    return this.parent.delete(this.expand(key));
  }

  /** The parent already answers relative to the prefix it was asked about, so the names pass through. */
  async list(prefix: string): Promise<string[]> {
    return this.parent.list(this.expand(prefix));
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    return this.parent.batch(ops.map((op) => ({ ...op, key: this.expand(op.key) })));
  }

  private expand(key: string): string {
    checkKey(key);
    return this.prefix + key;
  }
}

function checkKey(key: string): void {
  if (typeof key !== 'string') throw new BadRequestError('storage key must be a string');
  if (key.split('/').includes('..')) {
    throw new BadRequestError(`storage key "${key}" must not contain a ".." segment`);
  }
}

/**
 * Deletes every key under `prefix` (e.g. when a mount is disabled), folder by folder, in batches of
 * bounded size. Not atomic as a whole — each chunk is — so a crash midway leaves a smaller
 * remainder that running it again removes.
 */
export async function deletePrefix(storage: Storage, prefix: string): Promise<void> {
  let pending: BatchOp[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const ops = pending;
    pending = [];
    await storage.batch(ops);
  };
  const walk = async (folder: string): Promise<void> => {
    for (const name of await storage.list(folder)) {
      if (name.endsWith('/')) {
        await walk(folder + name);
      } else {
        pending.push({ type: 'delete', key: folder + name });
        if (pending.length >= DELETE_CHUNK) await flush();
      }
    }
  };
  await walk(prefix);
  await flush();
}
