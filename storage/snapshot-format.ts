/**
 * The snapshot file: every key and value of a physical store, as stored (so values stay
 * barrier ciphertext), between a header and a trailer. All integers are big-endian.
 *
 * ```
 * header   "KWSNAP\r\n" ‖ version(1)=1 ‖ keyring term(4) ‖ created, ms since 1970 (8)
 *          ‖ cluster id length(1) ‖ cluster id (UTF-8)
 * entry    0x01 ‖ key length(4) ‖ key (UTF-8) ‖ value length(4) ‖ value        (any number, key order)
 * trailer  0x00 ‖ entry count(8) ‖ seal(32) ‖ checksum(32)
 * ```
 *
 * - The **seal** is HMAC-SHA-256, under a key derived from the cluster's keyring, of the SHA-256 of
 *   everything before the seal: only a cluster holding that keyring makes or recognizes it, which
 *   is how a snapshot of another cluster is told apart from one of this cluster.
 * - The **checksum** is the SHA-256 of everything before it, the seal included: any changed,
 *   missing or extra byte fails it, whoever made the file.
 * - The `\r\n` in the magic catches a transfer that rewrote line endings; nothing may follow the
 *   checksum.
 */
import { createHash, createHmac, timingSafeEqual, type Hash } from 'node:crypto';
import { BadRequestError } from '../core/errors.js';
import { compareKeys } from './keys.js';
import type { StoredEntry } from './storage.js';

export const SNAPSHOT_MAGIC = Buffer.from('KWSNAP\r\n', 'latin1');
export const SNAPSHOT_VERSION = 1;
const ENTRY_TAG = 0x01;
const END_TAG = 0x00;
const DIGEST_LENGTH = 32;
/** Limits that stop a corrupt length from making the reader wait for gigabytes that never come. */
const MAX_KEY_LENGTH = 64 * 1024;
const MAX_VALUE_LENGTH = 512 * 1024 * 1024;
/** Output is gathered into pieces about this large before it is handed on. */
const PIECE_BYTES = 64 * 1024;

export interface SnapshotHeader {
  /** The active keyring term when the snapshot was taken. */
  readonly term: number;
  readonly created: Date;
  /** The id of the cluster that made it (informational: the seal is what proves it). */
  readonly clusterId: string;
}

/** A snapshot that is not a well-formed, complete Keywarden snapshot; the message says what is wrong. */
export class SnapshotFormatError extends BadRequestError {}

/** The seal over `digest` under `key` (see the file comment). */
export function snapshotSeal(key: Uint8Array, digest: Uint8Array): Buffer {
  return createHmac('sha256', key).update(digest).digest();
}

/**
 * The snapshot of `entries` as a stream of pieces. `sealKey` makes the seal; it is only used once
 * the last entry has been read.
 */
export async function* writeSnapshot(header: SnapshotHeader, entries: AsyncIterable<StoredEntry>, sealKey: () => Uint8Array): AsyncGenerator<Buffer> {
  const sealed = createHash('sha256');
  const whole = createHash('sha256');
  const emit = (piece: Buffer): Buffer => {
    sealed.update(piece);
    whole.update(piece);
    return piece;
  };
  yield emit(encodeHeader(header));
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let count = 0n;
  for await (const { key, value } of entries) {
    const keyBytes = Buffer.from(key, 'utf8');
    const head = Buffer.alloc(5);
    head[0] = ENTRY_TAG;
    head.writeUInt32BE(keyBytes.length, 1);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(value.length, 0);
    pending.push(head, keyBytes, length, Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    pendingBytes += 9 + keyBytes.length + value.length;
    count++;
    if (pendingBytes >= PIECE_BYTES) {
      yield emit(Buffer.concat(pending, pendingBytes));
      pending = [];
      pendingBytes = 0;
    }
  }
  const end = Buffer.alloc(9);
  end[0] = END_TAG;
  end.writeBigUInt64BE(count, 1);
  pending.push(end);
  pendingBytes += end.length;
  const body = emit(Buffer.concat(pending, pendingBytes));
  const seal = snapshotSeal(sealKey(), sealed.digest());
  whole.update(seal);
  yield Buffer.concat([body, seal, whole.digest()]);
}

/**
 * Reads a snapshot from a stream of bytes, checking it as it goes: `header()` first, then
 * `entries()`, which throws SnapshotFormatError at the first thing wrong — a structural error at
 * once, a changed byte when the checksum is reached — so a caller that applies entries as they
 * come must be able to undo them (`PhysicalStorage.replaceAll` is). After the last entry,
 * `sealedBy(key)` tells whether the snapshot was made by the cluster with that key.
 */
export class SnapshotReader {
  private readonly bytes: ByteReader;
  private readonly sealed = createHash('sha256');
  private readonly whole = createHash('sha256');
  private parsedHeader: SnapshotHeader | undefined;
  private done: { readonly digest: Buffer; readonly seal: Buffer; readonly count: bigint } | undefined;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.bytes = new ByteReader(source, [this.sealed, this.whole]);
  }

  /** @throws SnapshotFormatError when the bytes are not a Keywarden snapshot of a known version. */
  async header(): Promise<SnapshotHeader> {
    if (this.parsedHeader) return this.parsedHeader;
    if (await this.bytes.atEnd()) throw new SnapshotFormatError('no snapshot: the body is empty');
    const fixed = await this.take(SNAPSHOT_MAGIC.length + 1 + 4 + 8 + 1, 'the header');
    if (!fixed.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) {
      throw new SnapshotFormatError('not a Keywarden snapshot (the file does not start with the snapshot header)');
    }
    let at = SNAPSHOT_MAGIC.length;
    const version = fixed[at++]!;
    if (version !== SNAPSHOT_VERSION) throw new SnapshotFormatError(`unsupported snapshot format version ${version} (this server reads version ${SNAPSHOT_VERSION})`);
    const term = fixed.readUInt32BE(at);
    at += 4;
    const created = new Date(Number(fixed.readBigUInt64BE(at)));
    at += 8;
    const idLength = fixed[at]!;
    const clusterId = decodeText(await this.take(idLength, 'the header'), 'cluster id');
    this.parsedHeader = { term, created, clusterId };
    return this.parsedHeader;
  }

  /** Every entry, in order; ends only after the trailer has been read and the checksum matched. */
  async *entries(): AsyncGenerator<StoredEntry> {
    await this.header();
    let count = 0n;
    let previous: string | undefined;
    for (;;) {
      // Most entries are already buffered: read them without waiting (see ByteReader.now).
      const tag = (this.bytes.now(1) ?? (await this.take(1, 'an entry')))[0];
      if (tag === END_TAG) break;
      if (tag !== ENTRY_TAG) throw new SnapshotFormatError(`snapshot is corrupt: unexpected byte 0x${tag!.toString(16).padStart(2, '0')} at entry ${count + 1n}`);
      const keyLength = (this.bytes.now(4) ?? (await this.take(4, 'an entry'))).readUInt32BE(0);
      if (keyLength === 0 || keyLength > MAX_KEY_LENGTH) throw new SnapshotFormatError(`snapshot is corrupt: entry ${count + 1n} has a key of ${keyLength} bytes`);
      const key = decodeText(this.bytes.now(keyLength) ?? (await this.take(keyLength, 'an entry')), 'key');
      if (previous !== undefined && compareKeys(previous, key) >= 0) {
        throw new SnapshotFormatError(`snapshot is corrupt: entry ${count + 1n} is out of order`);
      }
      const valueLength = (this.bytes.now(4) ?? (await this.take(4, 'an entry'))).readUInt32BE(0);
      if (valueLength > MAX_VALUE_LENGTH) throw new SnapshotFormatError(`snapshot is corrupt: entry ${count + 1n} has a value of ${valueLength} bytes`);
      const value = this.bytes.now(valueLength) ?? (await this.take(valueLength, 'an entry'));
      previous = key;
      count++;
      yield { key, value };
    }
    const declared = (await this.take(8, 'the trailer')).readBigUInt64BE(0);
    this.bytes.hashConsumed();
    const digest = this.sealed.digest();
    this.bytes.stopHashing(this.sealed);
    const seal = await this.take(DIGEST_LENGTH, 'the trailer');
    this.bytes.hashConsumed();
    this.bytes.stopHashing(this.whole);
    const checksum = await this.take(DIGEST_LENGTH, 'the trailer');
    if (!timingSafeEqual(checksum, this.whole.digest())) throw new SnapshotFormatError('snapshot is corrupt: the checksum does not match its contents');
    if (!(await this.bytes.atEnd())) throw new SnapshotFormatError('snapshot is corrupt: there are bytes after its end');
    if (declared !== count) throw new SnapshotFormatError(`snapshot is corrupt: it declares ${declared} entries and holds ${count}`);
    this.done = { digest, seal: Buffer.from(seal), count };
  }

  /** How many entries the snapshot held; only after `entries()` finished. */
  get count(): number {
    return Number(this.completed().count);
  }

  /** Whether the seal was made under `key` (this cluster's), compared in constant time. */
  sealedBy(key: Uint8Array): boolean {
    const { digest, seal } = this.completed();
    return timingSafeEqual(snapshotSeal(key, digest), seal);
  }

  private completed(): { readonly digest: Buffer; readonly seal: Buffer; readonly count: bigint } {
    if (!this.done) throw new Error('the snapshot has not been read to its end');
    return this.done;
  }

  /** Exactly `n` bytes, waiting for them if need be. */
  private async take(n: number, where: string): Promise<Buffer> {
    const out = await this.bytes.read(n);
    if (out.length < n) throw truncated(where);
    return out;
  }
}

function encodeHeader(header: SnapshotHeader): Buffer {
  const id = Buffer.from(header.clusterId, 'utf8');
  if (id.length > 255) throw new BadRequestError('cluster id too long for a snapshot header');
  const fixed = Buffer.alloc(SNAPSHOT_MAGIC.length + 1 + 4 + 8 + 1);
  SNAPSHOT_MAGIC.copy(fixed, 0);
  let at = SNAPSHOT_MAGIC.length;
  fixed[at++] = SNAPSHOT_VERSION;
  fixed.writeUInt32BE(header.term, at);
  at += 4;
  fixed.writeBigUInt64BE(BigInt(header.created.getTime()), at);
  at += 8;
  fixed[at] = id.length;
  return Buffer.concat([fixed, id]);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeText(bytes: Buffer, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new SnapshotFormatError(`snapshot is corrupt: a ${what} is not valid UTF-8`);
  }
}

function truncated(where: string): SnapshotFormatError {
  return new SnapshotFormatError(`snapshot is truncated: it ends inside ${where}`);
}

/**
 * Reads exact byte counts from a stream of chunks of any size, and feeds every byte it hands out
 * to `hashes` — in bulk, when a buffer is left behind or on `hashConsumed`, not per read.
 */
class ByteReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private buffer: Buffer = Buffer.alloc(0);
  private position = 0;
  /** Bytes of `buffer` before this offset have been hashed. */
  private hashed = 0;
  private ended = false;

  constructor(
    source: AsyncIterable<Uint8Array>,
    private readonly hashes: Hash[],
  ) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** `n` bytes if they are buffered already, else undefined (then `read`). */
  now(n: number): Buffer | undefined {
    if (this.buffer.length - this.position < n) return undefined;
    const out = this.buffer.subarray(this.position, this.position + n);
    this.position += n;
    return out;
  }

  /** `n` bytes, or fewer only at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    while (this.buffer.length - this.position < n && !this.ended) await this.pull();
    return this.now(Math.min(n, this.buffer.length - this.position))!;
  }

  async atEnd(): Promise<boolean> {
    while (this.buffer.length === this.position && !this.ended) await this.pull();
    return this.buffer.length === this.position;
  }

  /** Hashes every byte handed out so far. */
  hashConsumed(): void {
    if (this.position > this.hashed) {
      const consumed = this.buffer.subarray(this.hashed, this.position);
      for (const hash of this.hashes) hash.update(consumed);
    }
    this.hashed = this.position;
  }

  /** Bytes handed out from now on are not fed to `hash`. */
  stopHashing(hash: Hash): void {
    const at = this.hashes.indexOf(hash);
    if (at >= 0) this.hashes.splice(at, 1);
  }

  private async pull(): Promise<void> {
    const next = await this.iterator.next();
    if (next.done) {
      this.ended = true;
      return;
    }
    if (next.value.byteLength === 0) return;
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    this.hashConsumed();
    // Values handed out are views of the old buffer, which stays as it is: the rest is copied.
    this.buffer = this.position === this.buffer.length ? chunk : Buffer.concat([this.buffer.subarray(this.position), chunk]);
    this.position = 0;
    this.hashed = 0;
  }
}
