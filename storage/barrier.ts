import { createHmac, randomBytes } from 'node:crypto';
import { BadRequestError, IntegrityError, SealedError } from '../core/errors.js';
import { AES256_KEY_LENGTH, GCM_NONCE_LENGTH, GCM_TAG_LENGTH, gcmOpen, gcmSealWithNonce, zeroize } from './aead.js';
import type { BatchOp, Storage } from './storage.js';

/** The status of the active keyring term, as `sys/key-status` reports it. */
export interface KeyStatus {
  term: number;
  installTime: Date;
  /** Encryptions under this term since this process unsealed (not persisted). */
  encryptions: number;
}

export interface BarrierOptions {
  /**
   * Where keys and nonces come from. Only known-answer tests replace it; anything that repeats
   * a nonce under one key breaks GCM.
   */
  randomBytes?: (size: number) => Uint8Array;
}

/**
 * The keyring's physical key. Its value is encrypted with the root key (not a keyring term, which
 * it holds) and always framed as term 1, as Vault does, so the format never depends on rotation.
 */
export const KEYRING_PATH = 'core/keyring';
/** The framing term of the keyring entry, whatever the active term is. */
const KEYRING_FRAME_TERM = 1;
/** Version 2: the AAD is the storage path. (Version 1, no AAD, is Vault's legacy; we never wrote it.) */
const VERSION_PATH_AAD = 0x02;
const TERM_LENGTH = 4;
const HEADER_LENGTH = TERM_LENGTH + 1;
const MIN_VALUE_LENGTH = HEADER_LENGTH + GCM_NONCE_LENGTH + GCM_TAG_LENGTH;

interface TermKey {
  readonly term: number;
  readonly key: Buffer;
  readonly installTime: Date;
}

interface Keyring {
  readonly terms: Map<number, TermKey>;
  active: TermKey;
  encryptions: number;
}

/** The keyring as serialized (Vault's field names), before encryption under the root key. */
interface KeyringDocument {
  Keys: Array<{ Term: number; Version: number; Value: string; InstallTime: string }>;
}

/**
 * The encrypting barrier: a `Storage` over a physical store in which every value is AES-256-GCM
 * ciphertext under the active keyring term, with the storage path as AAD, laid out as
 * `term(4, BE) ‖ version(1)=0x02 ‖ nonce(12) ‖ ciphertext ‖ tag(16)`. Keys are passed through
 * unchanged, so `list` needs no key material (it is still refused while sealed).
 *
 * Sentinel errors: `SealedError` for any data operation while sealed; `IntegrityError` (naming
 * the path) for a value that does not authenticate — tampered, moved to another path, or under an
 * unknown term; `BadRequestError` for any get, put or delete of the keyring's own path.
 */
export class Barrier implements Storage {
  private keyring: Keyring | undefined;
  /** Kept while unsealed: rotation must re-encrypt the keyring under it. */
  private rootKey: Buffer | undefined;
  /** Bumped by `seal()`, so an unseal or rotation that was awaiting storage cannot resurrect keys. */
  private generation = 0;
  /** Rotations run one at a time; two at once would both mint term N+1 with different keys. */
  private rotating: Promise<unknown> = Promise.resolve();
  private readonly random: (size: number) => Uint8Array;
  /** Called before every write (HA: throws on a standby, whose writes go to the active node). */
  private writeGuard: (() => void) | undefined;
  /** A keyring re-read in flight (another node rotated): shared by every reader that needs it. */
  private reloading: Promise<void> | undefined;

  constructor(private readonly physical: Storage, options: BarrierOptions = {}) {
    this.random = options.randomBytes ?? randomBytes;
  }

  get sealed(): boolean {
    return this.keyring === undefined;
  }

  /** True once a keyring exists in physical storage; answerable while sealed. */
  async isInitialized(): Promise<boolean> {
    return (await this.physical.get(KEYRING_PATH)) !== undefined;
  }

  /**
   * Creates the keyring with term 1 and stores it under `rootKey`. The barrier stays sealed: the
   * caller unseals with the same root key, which also proves the stored keyring reads back.
   * @throws BadRequestError when a keyring already exists.
   */
  async initialize(rootKey: Uint8Array): Promise<void> {
    if (rootKey.length !== AES256_KEY_LENGTH) throw new BadRequestError(`root key must be ${AES256_KEY_LENGTH} bytes`);
    if (await this.isInitialized()) throw new BadRequestError('Vault is already initialized');
    const first: TermKey = { term: 1, key: this.freshKey(), installTime: new Date() };
    try {
      await this.physical.put(KEYRING_PATH, this.encryptKeyring([first], rootKey));
    } finally {
      zeroize(first.key);
    }
  }

  /**
   * Decrypts the keyring with `rootKey` and makes the barrier usable. Unsealing an unsealed
   * barrier only checks the key.
   * @throws BadRequestError when not initialized.
   * @throws IntegrityError ("unseal failed, invalid key") when `rootKey` does not open the keyring.
   */
  async unseal(rootKey: Uint8Array): Promise<void> {
    if (rootKey.length !== AES256_KEY_LENGTH) throw new IntegrityError('unseal failed, invalid key');
    const generation = this.generation;
    const stored = await this.physical.get(KEYRING_PATH);
    if (stored === undefined) throw new BadRequestError('Vault is not initialized');
    const terms = this.decryptKeyring(stored, rootKey);
    if (this.keyring !== undefined || generation !== this.generation) {
      // Already unsealed, or sealed while we read: either way these copies must not linger.
      for (const t of terms.values()) zeroize(t.key);
      if (generation !== this.generation) throw new SealedError();
      return;
    }
    const active = [...terms.values()].reduce((a, b) => (b.term > a.term ? b : a));
    this.keyring = { terms, active, encryptions: 0 };
    this.rootKey = Buffer.from(rootKey);
  }

  /** Wipes every key from memory. Idempotent. */
  seal(): void {
    this.generation++;
    if (this.keyring !== undefined) {
      for (const t of this.keyring.terms.values()) zeroize(t.key);
    }
    zeroize(this.rootKey);
    this.keyring = undefined;
    this.rootKey = undefined;
  }

  /**
   * Adds term N+1 with a new random key and rewrites the keyring. New writes use the new term;
   * values under older terms still decrypt, because every term stays in the keyring.
   */
  rotate(): Promise<KeyStatus> {
    const run = this.rotating.then(() => this.rotateNow());
    this.rotating = run.catch(() => undefined);
    return run;
  }

  /** Installs the check every write runs first (see `writeGuard`). */
  setWriteGuard(guard: (() => void) | undefined): void {
    this.writeGuard = guard;
  }

  /**
   * Re-reads the keyring with the root key held since unseal (another node of an HA cluster
   * rotated it). Terms only ever get added, so the copy in memory stays usable meanwhile.
   */
  reloadKeyring(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        const ring = this.unsealedKeyring();
        const generation = this.generation;
        const stored = await this.physical.get(KEYRING_PATH);
        if (stored === undefined || generation !== this.generation || this.rootKey === undefined) return;
        const terms = this.decryptKeyring(stored, this.rootKey);
        for (const [term, key] of terms) {
          if (ring.terms.has(term)) {
            zeroize(key.key);
          } else {
            ring.terms.set(term, key);
            if (term > ring.active.term) {
              ring.active = key;
              ring.encryptions = 0;
            }
          }
        }
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /**
   * Replaces the keyring in memory with the stored one, read with the root key held since unseal
   * (the whole store was replaced by a snapshot's, whose keyring may have fewer terms or other
   * keys). False, and the barrier unchanged, when that root key does not open the stored keyring:
   * the snapshot came from another cluster, and only its own shares open it.
   * @throws SealedError while sealed.
   */
  async reopen(): Promise<boolean> {
    const ring = this.unsealedKeyring();
    const generation = this.generation;
    const stored = await this.physical.get(KEYRING_PATH);
    if (generation !== this.generation || this.rootKey === undefined) throw new SealedError();
    if (stored === undefined) return false;
    let terms: Map<number, TermKey>;
    try {
      terms = this.decryptKeyring(stored, this.rootKey);
    } catch (err) {
      if (err instanceof IntegrityError) return false;
      throw err;
    }
    for (const t of ring.terms.values()) zeroize(t.key);
    const active = [...terms.values()].reduce((a, b) => (b.term > a.term ? b : a));
    this.keyring = { terms, active, encryptions: 0 };
    return true;
  }

  /**
   * A key for a purpose named by `label`, the same on every node unsealed with this keyring
   * (HMAC-SHA-256 of the label under the first term's key), and never stored.
   */
  deriveKey(label: string): Buffer {
    const ring = this.unsealedKeyring();
    const first = [...ring.terms.values()].reduce((a, b) => (b.term < a.term ? b : a));
    return createHmac('sha256', first.key).update(`keywarden derived key: ${label}`).digest();
  }

  /** @throws SealedError while sealed. */
  keyStatus(): KeyStatus {
    const ring = this.unsealedKeyring();
    return { term: ring.active.term, installTime: new Date(ring.active.installTime), encryptions: ring.encryptions };
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    this.unsealedKeyring();
    refuseKeyring(key);
    const stored = await this.physical.get(key);
    if (stored === undefined) return undefined;
    if (stored.length >= TERM_LENGTH && !this.hasTerm(stored)) {
      // Written under a term another node added since we read the keyring.
      await this.reloadKeyring();
    }
    return this.decrypt(key, stored);
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    this.unsealedKeyring();
    refuseKeyring(key);
    this.writeGuard?.();
    await this.physical.put(key, this.encrypt(key, value));
  }

  async delete(key: string): Promise<void> {
    this.unsealedKeyring();
    refuseKeyring(key);
    this.writeGuard?.();
    await this.physical.delete(key);
  }

  async list(prefix: string): Promise<string[]> {
    this.unsealedKeyring();
    return this.physical.list(prefix);
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    this.unsealedKeyring();
    for (const op of ops) refuseKeyring(op.key);
    this.writeGuard?.();
    await this.physical.batch(ops.map((op) => (op.type === 'put'
      ? { type: 'put' as const, key: op.key, value: this.encrypt(op.key, op.value) }
      : op)));
  }

  private async rotateNow(): Promise<KeyStatus> {
    const ring = this.unsealedKeyring();
    this.writeGuard?.();
    // Another node may have rotated since we read the keyring: start from the stored one.
    await this.reloadKeyring();
    const rootKey = this.rootKey!;
    const generation = this.generation;
    let newest = 0;
    for (const term of ring.terms.keys()) newest = Math.max(newest, term);
    const next: TermKey = { term: newest + 1, key: this.freshKey(), installTime: new Date() };
    try {
      await this.physical.put(KEYRING_PATH, this.encryptKeyring([...ring.terms.values(), next], rootKey));
    } catch (err) {
      zeroize(next.key);
      throw err;
    }
    if (generation !== this.generation) {
      // Sealed while writing: the stored keyring has the new term and the next unseal loads it.
      zeroize(next.key);
      throw new SealedError();
    }
    ring.terms.set(next.term, next);
    ring.active = next;
    ring.encryptions = 0;
    return this.keyStatus();
  }

  private hasTerm(stored: Uint8Array): boolean {
    return this.keyring?.terms.has(termOf(stored)) ?? false;
  }

  private encrypt(path: string, plaintext: Uint8Array): Buffer {
    const ring = this.unsealedKeyring();
    // node:crypto would quietly encrypt a string as UTF-8; storage holds bytes only.
    if (!(plaintext instanceof Uint8Array)) throw new BadRequestError(`storage value for "${path}" must be a Uint8Array`);
    const out = frame(ring.active.term, ring.active.key, this.nonce(), path, plaintext);
    ring.encryptions++;
    return out;
  }

  private decrypt(path: string, stored: Uint8Array): Buffer {
    const ring = this.unsealedKeyring();
    return unframe(stored, path, (term) => ring.terms.get(term)?.key);
  }

  private encryptKeyring(terms: readonly TermKey[], rootKey: Uint8Array): Buffer {
    const doc: KeyringDocument = {
      Keys: [...terms].sort((a, b) => a.term - b.term).map((t) => ({
        Term: t.term,
        Version: 1,
        Value: t.key.toString('base64'),
        InstallTime: t.installTime.toISOString(),
      })),
    };
    // The base64 strings in `doc` and the JSON text cannot be wiped (JS strings are immutable);
    // only the byte copy can. They are unreachable after this call and left to the collector.
    const plain = Buffer.from(JSON.stringify(doc), 'utf8');
    try {
      return frame(KEYRING_FRAME_TERM, rootKey, this.nonce(), KEYRING_PATH, plain);
    } finally {
      zeroize(plain);
    }
  }

  private decryptKeyring(stored: Uint8Array, rootKey: Uint8Array): Map<number, TermKey> {
    let plain: Buffer;
    try {
      plain = unframe(stored, KEYRING_PATH, (term) => (term === KEYRING_FRAME_TERM ? rootKey : undefined));
    } catch (err) {
      if (err instanceof IntegrityError) throw new IntegrityError('unseal failed, invalid key');
      throw err;
    }
    try {
      return parseKeyring(plain);
    } finally {
      zeroize(plain);
    }
  }

  private freshKey(): Buffer {
    const random = this.random(AES256_KEY_LENGTH);
    const key = Buffer.from(random);
    zeroize(random);
    return key;
  }

  private nonce(): Uint8Array {
    return this.random(GCM_NONCE_LENGTH);
  }

  private unsealedKeyring(): Keyring {
    if (this.keyring === undefined) throw new SealedError();
    return this.keyring;
  }
}

/** `term ‖ version ‖ nonce ‖ ciphertext ‖ tag`, authenticated with `path` as AAD. */
function frame(term: number, key: Uint8Array, nonce: Uint8Array, path: string, plaintext: Uint8Array): Buffer {
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt32BE(term, 0);
  header[TERM_LENGTH] = VERSION_PATH_AAD;
  return Buffer.concat([header, gcmSealWithNonce(key, nonce, plaintext, Buffer.from(path, 'utf8'))]);
}

/** The keyring term a stored value was written under (its first four bytes, big-endian). */
function termOf(stored: Uint8Array): number {
  return Buffer.from(stored.buffer, stored.byteOffset, TERM_LENGTH).readUInt32BE(0);
}

function unframe(stored: Uint8Array, path: string, keyFor: (term: number) => Uint8Array | undefined): Buffer {
  if (stored.length < MIN_VALUE_LENGTH) {
    throw new IntegrityError(`cannot decrypt "${path}": value too short`);
  }
  const view = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const term = termOf(view);
  if (view[TERM_LENGTH] !== VERSION_PATH_AAD) {
    throw new IntegrityError(`cannot decrypt "${path}": version bytes mis-match`);
  }
  const key = keyFor(term);
  if (key === undefined) throw new IntegrityError(`cannot decrypt "${path}": no key for term ${term}`);
  try {
    return gcmOpen(key, view.subarray(HEADER_LENGTH), Buffer.from(path, 'utf8'));
  } catch (err) {
    if (err instanceof IntegrityError) throw new IntegrityError(`cannot decrypt "${path}": message authentication failed`);
    throw err;
  }
}

function parseKeyring(plain: Buffer): Map<number, TermKey> {
  const malformed = (): IntegrityError => new IntegrityError('keyring is malformed');
  let doc: unknown;
  try {
    doc = JSON.parse(plain.toString('utf8'));
  } catch {
    throw malformed();
  }
  const keys = (doc as Partial<KeyringDocument> | null)?.Keys;
  if (!Array.isArray(keys) || keys.length === 0) throw malformed();
  const terms = new Map<number, TermKey>();
  try {
    for (const entry of keys as unknown[]) {
      const { Term, Value, InstallTime } = (entry ?? {}) as Partial<KeyringDocument['Keys'][number]>;
      if (!Number.isInteger(Term) || Term! < 1 || Term! > 0xffffffff || terms.has(Term!)) throw malformed();
      if (typeof Value !== 'string' || typeof InstallTime !== 'string') throw malformed();
      const key = Buffer.from(Value, 'base64');
      const installTime = new Date(InstallTime);
      if (key.length !== AES256_KEY_LENGTH || Number.isNaN(installTime.getTime())) {
        zeroize(key);
        throw malformed();
      }
      terms.set(Term!, { term: Term!, key, installTime });
    }
  } catch (err) {
    for (const t of terms.values()) zeroize(t.key);
    throw err;
  }
  return terms;
}

/** The keyring is the barrier's own; writing it through the data API would brick the store. */
function refuseKeyring(key: string): void {
  if (key === KEYRING_PATH || key.startsWith(KEYRING_PATH + '/')) {
    throw new BadRequestError(`"${key}" is reserved for the barrier keyring`);
  }
}
