/**
 * Online snapshots of the whole physical store (`sys/storage/snapshot`, and Vault's
 * `sys/storage/raft/snapshot`): saving streams every key at one moment, as stored — values stay
 * barrier ciphertext — in the format of storage/snapshot-format.ts; restoring replaces the store
 * at once and rebuilds everything the host had loaded from it.
 *
 * A restore first receives the whole snapshot into a private temporary file while checking it
 * (header, structure, checksum, and, unless forced, that this cluster sealed it), so a corrupt,
 * truncated or foreign snapshot is refused before anything changes. A snapshot whose seal fails
 * but whose keyring this server's root key opens was made here and changed since (entries spliced
 * in, the checksum made again): that is refused even when forced, for force is only for a
 * snapshot of another cluster, which brings its own keyring and unseal keys. Only then does it stop new
 * requests, wait for those in flight, replace the store in one atomic step and reload.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { KEYRING_PATH, type Barrier } from '../../storage/barrier.js';
import { SnapshotFormatError, SnapshotReader, writeSnapshot } from '../../storage/snapshot-format.js';
import type { PhysicalStorage, StoredEntry } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import { BadRequestError, SealedError, UnavailableError } from '../errors.js';
import type { SealManager } from '../seal/seal-manager.js';
import type { Unsealed } from '../unsealed.js';

/** What the seal of a snapshot is made with: a key every node unsealed with this keyring derives alike. */
const SEAL_KEY_LABEL = 'storage snapshot seal';
/** Read from the temporary file in pieces this large. */
const FILE_CHUNK = 256 * 1024;

export interface SnapshotDeps {
  /** Runs `work` while no other request runs: new ones wait, those in flight finish first. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Drops everything loaded from storage (mount tables and backends, audit devices, caches). */
  unload(): Promise<void>;
  /** Loads it all again from the store as it now is. */
  load(): Promise<void>;
  /** Seals the server (the restored keyring is another cluster's). */
  seal(): Promise<void>;
}

export interface RestoreResult {
  /** How many keys the store now holds. */
  readonly keys: number;
  /** The restored keyring is another cluster's: the server sealed itself and needs that cluster's shares. */
  readonly sealed: boolean;
}

export class Snapshots {
  constructor(
    private readonly physical: PhysicalStorage,
    private readonly barrier: Barrier,
    private readonly seal: SealManager,
    private readonly clock: Clock,
    private readonly unsealed: Unsealed,
    private readonly deps: SnapshotDeps,
  ) {}

  /**
   * The snapshot as pieces of bytes, read from the store at one moment. If the server seals before
   * the end, the stream fails without its trailer, and the partial file is refused on restore.
   * @throws SealedError while sealed.
   */
  save(): AsyncIterable<Buffer> {
    const header = { term: this.barrier.keyStatus().term, created: this.clock.now(), clusterId: this.unsealed.loaded ? this.unsealed.cluster.id : '' };
    return writeSnapshot(header, this.physical.entries(), () => this.sealKey());
  }

  /**
   * Checks the snapshot in `body` completely, then replaces the store with it. `force` accepts a
   * snapshot sealed by another cluster (its keyring then replaces ours, and the server seals).
   * @throws SnapshotFormatError for a corrupt, truncated or foreign-format snapshot, and
   *   BadRequestError for another cluster's snapshot without `force`; the store is unchanged.
   */
  async restore(body: AsyncIterable<Uint8Array>, force: boolean): Promise<RestoreResult> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-snapshot-'));
    try {
      const file = path.join(dir, 'snapshot');
      await this.receive(body, file, force);
      return await this.deps.exclusive(() => this.replace(file));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Copies `body` to `file` while reading it as a snapshot, and refuses it if anything is wrong. */
  private async receive(body: AsyncIterable<Uint8Array>, file: string, force: boolean): Promise<void> {
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    // A write error (a full disk) must fail this restore, never reach the process as an unhandled event.
    let writeFailed: unknown;
    out.on('error', (err) => (writeFailed = err));
    const copy = async function* (): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        if (writeFailed !== undefined) throw tempFileFailed(writeFailed);
        if (!out.write(chunk)) await drained(out);
        yield chunk;
      }
    };
    const reader = new SnapshotReader(copy());
    let keyring: Buffer | undefined;
    try {
      await reader.header();
      for await (const entry of reader.entries()) {
        if (entry.key === KEYRING_PATH) keyring = Buffer.from(entry.value);
      }
      if (!keyring) throw new SnapshotFormatError('snapshot holds no keyring: it is not a snapshot of an initialized Keywarden store');
    } finally {
      if (!out.closed) {
        out.end();
        await once(out, 'close');
      }
    }
    if (writeFailed !== undefined) throw tempFileFailed(writeFailed);
    if (reader.sealedBy(this.sealKey())) return;
    if (this.barrier.opensKeyring(keyring)) {
      throw new BadRequestError('snapshot has been altered: its keyring is this cluster\'s but its seal does not match its contents; it is refused, even by snapshot-force');
    }
    if (!force) {
      throw new BadRequestError('snapshot was made by another cluster (its keyring is not this one\'s): restore it with snapshot-force to replace this cluster\'s keyring and unseal keys with the snapshot\'s');
    }
  }

  /** Replaces the store with the checked snapshot in `file` and rebuilds what the host holds. */
  private async replace(file: string): Promise<RestoreResult> {
    // Sealed while the snapshot was received (a request that was in flight): leave the store alone.
    if (this.barrier.sealed) throw new SealedError();
    await this.deps.unload();
    let replaced: { readonly result: number; readonly opened: boolean };
    try {
      replaced = await this.barrier.replaceStore(() => this.physical.replaceAll(entriesOf(file)));
    } catch (err) {
      // Nothing was replaced: serve the store as it was.
      await this.deps.load();
      throw err;
    }
    this.seal.storeReplaced();
    if (!replaced.opened) {
      await this.deps.seal();
      return { keys: replaced.result, sealed: true };
    }
    await this.deps.load();
    return { keys: replaced.result, sealed: false };
  }

  private sealKey(): Buffer {
    return this.barrier.deriveKey(SEAL_KEY_LABEL);
  }
}

/** Resolves when `out` can take more, or has closed (after an error); leaves no listener behind. */
function drained(out: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

function tempFileFailed(cause: unknown): UnavailableError {
  return new UnavailableError('cannot keep the snapshot in a temporary file while checking it', { cause });
}

/** The entries of a snapshot already checked; read and checked again, in case the file changed. */
async function* entriesOf(file: string): AsyncGenerator<StoredEntry> {
  const handle = await open(file, 'r');
  try {
    const reader = new SnapshotReader(chunksOf(handle));
    yield* reader.entries();
  } finally {
    await handle.close();
  }
}

async function* chunksOf(handle: Awaited<ReturnType<typeof open>>): AsyncGenerator<Buffer> {
  for (;;) {
    const buffer = Buffer.allocUnsafe(FILE_CHUNK);
    const { bytesRead } = await handle.read(buffer, 0, FILE_CHUNK, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
  }
}
