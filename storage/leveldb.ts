import { statfs } from 'node:fs/promises';
import { Level, type KeyIterator } from 'level';
import { UnavailableError } from '../core/errors.js';
import { ensurePrivateDirectory } from '../core/private-files.js';
import { afterFolder, prefixEnd, validateOp } from './keys.js';
import type { BatchOp, PhysicalStorage, StoredEntry } from './storage.js';

/**
 * Another process (or another open handle in this one) holds the LevelDB lock on the directory.
 * The message is meant to be printed as is to an operator; callers need no stack trace.
 */
export class StorageLockedError extends UnavailableError {
  constructor(readonly path: string) {
    super(`storage directory "${path}" is locked by another process (is another Keywarden server running?)`);
  }
}

/** How many keys `list` pulls from LevelDB per round trip into native code. */
const LIST_CHUNK = 256;
/**
 * Free space needed before writes resume after a full disk: reopening replays the log into a new
 * table file and starts a new log, so room for two of LevelDB's 4 MiB write buffers.
 */
const RESUME_FREE_BYTES = 8 * 1024 * 1024;

type Db = Level<string, Uint8Array>;

export interface LevelDbOptions {
  /** Told when an existing directory open to group or others had to be made private. */
  readonly onWarning?: (message: string) => void;
}

/**
 * The embedded physical store: LevelDB through `level`. Keys are UTF-8, values raw bytes. Every
 * error from LevelDB is rethrown as a Keywarden error so nothing LevelDB-specific reaches callers
 * (a PostgreSQL backend implements the same seam).
 */
export class LevelDbStorage implements PhysicalStorage {
  readonly kind = 'leveldb';

  /**
   * Why writes are refused: a write failed for want of space, and LevelDB's log may end in a
   * partial record. Appending behind it could hide later records from the next recovery (its
   * reader drops the rest of a block after a bad record), so the next write first reopens the
   * store, which recovers the log and starts a new one.
   */
  private writeFault: string | undefined;
  /** A reopen in progress (reads wait for it), or the reason the last one failed. */
  private reopening: Promise<void> | undefined;

  private constructor(private readonly db: Db, readonly path: string) {}

  /**
   * Opens (creating if needed) the store in directory `path`. The directory is made 0700 first:
   * LevelDB creates its files with the process's umask, and a private directory keeps them out of
   * reach whatever that umask is.
   * @throws StorageLockedError when another process has the directory open.
   * @throws UnavailableError for any other failure to open, and for a directory open to group or
   *   others that cannot be made private (see ensurePrivateDirectory).
   */
  static async open(path: string, options: LevelDbOptions = {}): Promise<LevelDbStorage> {
    await ensurePrivateDirectory(path, 'storage directory', options.onWarning ?? (() => undefined));
    const db: Db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    try {
      await db.open();
    } catch (err) {
      if (isLocked(err)) throw new StorageLockedError(path);
      throw new UnavailableError(`cannot open storage directory "${path}": ${messageOf(err)}`, { cause: err });
    }
    return new LevelDbStorage(db, path);
  }

  /**
   * Read on this thread (level's `getSync`): LevelDB answers a read from its memtable, its block
   * cache or the page cache in microseconds, while an asynchronous read queues work on libuv's
   * thread pool and wakes a thread for it. Under writes, the process then spends much of its time
   * waiting for that pool's lock and for the thread switches: with workers, the primary that owns
   * the store did so for most of its busy time (bench/README.md, "Storage reads"). A read LevelDB
   * must take from disk holds this thread for one block's read.
   */
  async get(key: string): Promise<Uint8Array | undefined> {
    await this.ready();
    try {
      return this.db.getSync(key);
    } catch (err) {
      throw this.failure('read', err);
    }
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    validateOp({ type: 'put', key, value });
    await this.writable();
    try {
      await this.db.put(key, value);
    } catch (err) {
      throw this.writeFailure('write', err);
    }
  }

  async delete(key: string): Promise<void> {
    validateOp({ type: 'delete', key });
    await this.writable();
    try {
      await this.db.del(key);
    } catch (err) {
      throw this.writeFailure('delete', err);
    }
  }

  /**
   * Walks only what it returns: on meeting a key inside a sub-folder it emits the folder once and
   * seeks past the folder's keys, so a folder with a million entries costs one step, not a million.
   */
  async list(prefix: string): Promise<string[]> {
    await this.ready();
    const end = prefixEnd(prefix);
    const out: string[] = [];
    let it: KeyIterator<Db, string> | undefined;
    try {
      it = this.db.keys(end === undefined ? { gte: prefix } : { gte: prefix, lt: end });
      for (;;) {
        const keys = await it.nextv(LIST_CHUNK);
        if (keys.length === 0) break;
        for (const key of keys) {
          const rest = key.slice(prefix.length);
          const slash = rest.indexOf('/');
          if (slash < 0) {
            out.push(rest);
            continue;
          }
          out.push(rest.slice(0, slash + 1));
          // Seeking drops the rest of this chunk; the next nextv starts past the folder.
          it.seek(afterFolder(prefix + rest.slice(0, slash)));
          break;
        }
      }
    } catch (err) {
      throw this.failure('list', err);
    } finally {
      await it?.close().catch(() => undefined);
    }
    return out;
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    for (const op of ops) validateOp(op);
    if (ops.length === 0) return;
    await this.writable();
    try {
      await this.db.batch(
        ops.map((op) => (op.type === 'put'
          ? { type: 'put' as const, key: op.key, value: op.value }
          : { type: 'del' as const, key: op.key })),
      );
    } catch (err) {
      throw this.writeFailure('batch write', err);
    }
  }

  /** A LevelDB iterator reads from an implicit snapshot taken when it is created. */
  entries(): AsyncIterable<StoredEntry> {
    const db = this.db;
    const failure = (err: unknown): UnavailableError => this.failure('read', err);
    const ready = () => this.ready();
    return (async function* () {
      await ready();
      const it = db.iterator();
      try {
        for (;;) {
          let chunk: Array<[string, Uint8Array]>;
          try {
            chunk = await it.nextv(LIST_CHUNK);
          } catch (err) {
            throw failure(err);
          }
          if (chunk.length === 0) return;
          for (const [key, value] of chunk) yield { key, value };
        }
      } finally {
        await it.close().catch(() => undefined);
      }
    })();
  }

  /**
   * One LevelDB batch deletes every key there was and writes every new one; a batch is applied
   * atomically (one log record), so readers see the old store or the new. The batch is built in
   * native memory and written only once `entries` is exhausted.
   */
  async replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number> {
    await this.writable();
    const batch = this.db.batch();
    let written = 0;
    try {
      const keys = this.db.keys();
      try {
        for (;;) {
          const chunk = await keys.nextv(LIST_CHUNK);
          if (chunk.length === 0) break;
          for (const key of chunk) batch.del(key);
        }
      } finally {
        await keys.close().catch(() => undefined);
      }
      for await (const entry of entries) {
        validateOp({ type: 'put', key: entry.key, value: entry.value });
        batch.put(entry.key, entry.value);
        written++;
      }
      await batch.write();
    } catch (err) {
      await batch.close().catch(() => undefined);
      if (err instanceof UnavailableError || !isLevelError(err)) throw err;
      throw this.writeFailure('batch write', err);
    }
    return written;
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } catch (err) {
      throw this.failure('close', err);
    }
  }

  /** Waits for a reopen in progress; reopens a store a failed reopen left closed. */
  private async ready(): Promise<void> {
    if (this.reopening) await this.reopening.catch(() => undefined);
    if (this.db.status === 'closed' && this.writeFault !== undefined) await this.reopen();
  }

  /**
   * Before a write: after a full disk, refuses while space is still short (reads go on meanwhile),
   * then reopens the store once there is room, so the write goes to a fresh log.
   */
  private async writable(): Promise<void> {
    await this.ready();
    const fault = this.writeFault;
    if (fault === undefined) return;
    const free = await statfs(this.path).then((s) => s.bavail * s.bsize, () => 0);
    if (free < RESUME_FREE_BYTES) throw refusedForSpace(fault);
    await this.reopen();
  }

  private reopen(): Promise<void> {
    this.reopening ??= (async () => {
      try {
        if (this.db.status === 'open') await this.db.close();
        await this.db.open();
        this.writeFault = undefined;
      } catch (err) {
        throw this.failure('reopen', err);
      } finally {
        this.reopening = undefined;
      }
    })();
    return this.reopening;
  }

  /** A failed write: for want of space, writes are refused until there is room again. */
  private writeFailure(what: string, err: unknown): UnavailableError {
    if (!isNoSpace(err)) return this.failure(what, err);
    this.writeFault = 'no space left on device';
    return new UnavailableError(`storage ${what} failed: ${refusedForSpace(this.writeFault).message}`, { cause: err });
  }

  /** A client may see an UnavailableError's message, so LevelDB's own text stays in `cause`. */
  private failure(what: string, err: unknown): UnavailableError {
    return new UnavailableError(`storage ${what} failed`, { cause: err });
  }
}

function refusedForSpace(fault: string): UnavailableError {
  return new UnavailableError(`${fault} (the storage disk is full): the write was not applied; data already written is intact and reads go on; writes resume once space is freed`);
}

/** LevelDB reports ENOSPC as an I/O error whose text is strerror's. */
function isNoSpace(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'ENOSPC' || /no space left on device/i.test(messageOf(e))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** classic-level reports a held lock as LEVEL_LOCKED, usually wrapped in LEVEL_DATABASE_NOT_OPEN. */
function isLocked(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'LEVEL_LOCKED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** LevelDB's own errors carry a `LEVEL_*` code; anything else came from the caller's entries. */
function isLevelError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('LEVEL_');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

