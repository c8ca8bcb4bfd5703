import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { BadRequestError, IntegrityError, SealedError } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';
import { SerialQueue } from '../core/seal/serial.js';
import { AES256_KEY_LENGTH, GCM_NONCE_LENGTH, GCM_TAG_LENGTH, gcmOpen, gcmSealWithNonce, zeroize } from './aead.js';
import type { BatchOp, Storage } from './storage.js';

/** The status of the active keyring term, as `sys/key-status` reports it. */
export interface KeyStatus {
  term: number;
  installTime: Date;
  /**
   * Encryptions under this term since it was installed: the count stored in the keyring plus this
   * node's encryptions since the last flush (`flushEncryptions`). Those are lost if the process
   * dies without sealing, so the count can fall short, never over.
   */
  encryptions: number;
}

/** When the active term is replaced automatically (`sys/rotate/config`), stored in the keyring. */
export interface RotationConfig {
  /** Whether automatic rotation happens at all; encryptions are counted either way. */
  readonly enabled: boolean;
  /** Rotate once the active term has encrypted more values than this. */
  readonly maxOperations: number;
  /** Rotate once the active term is older than this, in seconds; 0: never by age. */
  readonly intervalSeconds: number;
}

/**
 * The most encryptions one term may do before automatic rotation: 2^32 random 96-bit GCM nonces
 * under one key is NIST SP 800-38D's limit, less 10% for counts lost in crashes (Vault's value).
 */
export const MAX_OPERATIONS_LIMIT = 3_865_470_566;

export const DEFAULT_ROTATION_CONFIG: RotationConfig = { enabled: true, maxOperations: MAX_OPERATIONS_LIMIT, intervalSeconds: 0 };

export interface BarrierOptions {
  /**
   * Where keys and nonces come from. Only known-answer tests replace it; anything that repeats
   * a nonce under one key breaks GCM.
   */
  randomBytes?: (size: number) => Uint8Array;
  /** Install times of new terms, and the age automatic rotation compares with an interval. */
  clock?: Clock;
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
  /** Encryptions under this term as last stored in the keyring. */
  encryptions: number;
  /**
   * The key as node:crypto's KeyObject, made at its first use (cipherKeyOf): on Node 24 a cipher
   * made from a KeyObject costs a quarter of one made from the key's bytes, which node turns into a
   * key object each time (bench/README.md, "Storage reads"). Node clears its copy when it is
   * collected; the bytes above are what sealing wipes.
   */
  cipherKey?: KeyObject;
}

function cipherKeyOf(term: TermKey): KeyObject {
  return (term.cipherKey ??= createSecretKey(term.key));
}

interface Keyring {
  readonly terms: Map<number, TermKey>;
  active: TermKey;
  /** This node's encryptions under the active term not yet added to its stored count. */
  unflushed: number;
  rotation: RotationConfig;
}

/**
 * The keyring as serialized (Vault's field names and units: `Interval` is a Go duration in
 * nanoseconds), before encryption under the root key. Keyrings written before rotation settings
 * existed have neither `encryptions` nor `RotationConfig`, and read as 0 and the defaults.
 */
interface KeyringDocument {
  Keys: Array<{ Term: number; Version: number; Value: string; InstallTime: string; encryptions?: number }>;
  RotationConfig?: { Disabled: boolean; MaxOperations: number; Interval: number };
}

const NANOS_PER_SECOND = 1_000_000_000;

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
  /**
   * Keyring writes (rotations, rotation settings, encryption counts) run one at a time: two
   * rotations at once would both mint term N+1 with different keys, and any two writes at once
   * could each drop what the other added.
   */
  private readonly keyringWrites = new SerialQueue();
  private readonly random: (size: number) => Uint8Array;
  private readonly clock: Clock;
  /** Called before every write (HA: throws on a standby, whose writes go to the active node). */
  private writeGuard: (() => void) | undefined;
  /** A keyring re-read in flight (another node rotated): shared by every reader that needs it. */
  private reloading: Promise<void> | undefined;

  constructor(private readonly physical: Storage, options: BarrierOptions = {}) {
    this.random = options.randomBytes ?? randomBytes;
    this.clock = options.clock ?? systemClock;
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
    const first: TermKey = { term: 1, key: this.freshKey(), installTime: this.clock.now(), encryptions: 0 };
    try {
      await this.physical.put(KEYRING_PATH, this.encryptKeyring([first], DEFAULT_ROTATION_CONFIG, rootKey));
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
    const { terms, rotation } = this.decryptKeyring(stored, rootKey);
    if (this.keyring !== undefined || generation !== this.generation) {
      // Already unsealed, or sealed while we read: either way these copies must not linger.
      for (const t of terms.values()) zeroize(t.key);
      if (generation !== this.generation) throw new SealedError();
      return;
    }
    const active = [...terms.values()].reduce((a, b) => (b.term > a.term ? b : a));
    this.keyring = { terms, active, unflushed: 0, rotation };
    this.rootKey = Buffer.from(rootKey);
  }

  /**
   * A copy of the root key, for another worker of this server to unseal with
   * (core/cluster/worker-link.ts); the caller wipes it once sent.
   * @throws SealedError while sealed.
   */
  copyRootKey(): Buffer {
    if (this.rootKey === undefined) throw new SealedError();
    return Buffer.from(this.rootKey);
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
    return this.keyringWrites.run(() => this.rotateNow());
  }

  /** @throws SealedError while sealed. */
  rotationConfig(): RotationConfig {
    return { ...this.unsealedKeyring().rotation };
  }

  /** Stores new automatic-rotation settings in the keyring (the caller checks their ranges). */
  setRotationConfig(config: RotationConfig): Promise<void> {
    return this.keyringWrites.run(async () => {
      const ring = await this.freshKeyring();
      await this.storeKeyring([...ring.terms.values()], config);
      ring.rotation = { ...config };
    });
  }

  /**
   * Adds this node's encryptions since the last flush to the active term's count in the keyring,
   * so `sys/key-status` and `max_operations` survive a restart. Called periodically and on seal;
   * does nothing when there is nothing to add.
   */
  flushEncryptions(): Promise<void> {
    return this.keyringWrites.run(async () => {
      const ring = this.unsealedKeyring();
      if (ring.unflushed === 0) return;
      await this.freshKeyring();
      const active = ring.active;
      const added = ring.unflushed;
      await this.storeKeyring([...ring.terms.values()].map((t) => (t === active ? { ...t, encryptions: t.encryptions + added } : t)), ring.rotation);
      active.encryptions += added;
      // Encryptions made while the keyring was being written stay unflushed, for the next time.
      ring.unflushed -= added;
    });
  }

  /**
   * Why the active term is due for automatic rotation under the stored settings — too many
   * encryptions, or older than the interval — or undefined when it is not (or rotation is off).
   * @throws SealedError while sealed.
   */
  rotationDue(): string | undefined {
    const ring = this.unsealedKeyring();
    const { enabled, maxOperations, intervalSeconds } = ring.rotation;
    if (!enabled) return undefined;
    if (ring.active.encryptions + ring.unflushed > maxOperations) return 'reached max operations';
    const age = this.clock.now().getTime() - ring.active.installTime.getTime();
    if (intervalSeconds > 0 && age > intervalSeconds * 1000) return 'rotation interval reached';
    return undefined;
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
        const { terms, rotation } = this.decryptKeyring(stored, this.rootKey);
        ring.rotation = rotation;
        for (const [term, key] of terms) {
          const known = ring.terms.get(term);
          if (known) {
            zeroize(key.key);
            // Counts only grow; a stored one above ours was flushed by the node that did them.
            known.encryptions = Math.max(known.encryptions, key.encryptions);
          } else {
            ring.terms.set(term, key);
            if (term > ring.active.term) this.activate(ring, key);
          }
        }
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /**
   * Runs `replace` — which replaces the whole physical store (a snapshot restore) — between the
   * keyring writes (rotation, settings, encryption counts), so none of them can write the old
   * keyring over the new one; then reads the new keyring with the root key held since unseal and
   * replaces the one in memory with it. `opened` is false, and the barrier keeps its keys until it
   * is sealed, when that root key does not open the new keyring: the snapshot came from another
   * cluster, and only that cluster's shares open it.
   * @throws SealedError while sealed, before `replace` runs.
   */
  replaceStore<T>(replace: () => Promise<T>): Promise<{ readonly result: T; readonly opened: boolean }> {
    return this.keyringWrites.run(async () => {
      const ring = this.unsealedKeyring();
      const result = await replace();
      // The encryptions not yet counted were made under the keyring that was just replaced.
      ring.unflushed = 0;
      const generation = this.generation;
      const stored = await this.physical.get(KEYRING_PATH);
      if (generation !== this.generation || this.rootKey === undefined) throw new SealedError();
      if (stored === undefined) return { result, opened: false };
      let parsed: { terms: Map<number, TermKey>; rotation: RotationConfig };
      try {
        parsed = this.decryptKeyring(stored, this.rootKey);
      } catch (err) {
        if (err instanceof IntegrityError) return { result, opened: false };
        throw err;
      }
      for (const t of ring.terms.values()) zeroize(t.key);
      const active = [...parsed.terms.values()].reduce((a, b) => (b.term > a.term ? b : a));
      this.keyring = { terms: parsed.terms, active, unflushed: 0, rotation: parsed.rotation };
      return { result, opened: true };
    });
  }

  /**
   * Re-reads the keyring after another node replaced the whole store (a snapshot restore, which
   * the change feed reports as a resync): the one in memory becomes the stored one. Unlike
   * `reloadKeyring`, terms the store no longer has are dropped and the stored newest term is the
   * active one; kept, a term the snapshot did not have would shadow the different key a rotation
   * after the restore installs under the same number. Counts only grow, as in `reloadKeyring`.
   * @throws IntegrityError when the root key held since unseal does not open the stored keyring
   * (another cluster's snapshot: that node seals).
   */
  adoptStoredKeyring(): Promise<void> {
    return this.keyringWrites.run(async () => {
      const ring = this.unsealedKeyring();
      const generation = this.generation;
      const stored = await this.physical.get(KEYRING_PATH);
      if (stored === undefined || generation !== this.generation || this.rootKey === undefined) return;
      const { terms, rotation } = this.decryptKeyring(stored, this.rootKey);
      for (const [term, key] of terms) key.encryptions = Math.max(key.encryptions, ring.terms.get(term)?.encryptions ?? 0);
      const active = [...terms.values()].reduce((a, b) => (b.term > a.term ? b : a));
      // This node's encryptions not yet counted were made under its active term: they stay with
      // that term if the store still has it, and go with its key if not.
      const kept = terms.get(ring.active.term);
      if (kept && kept !== active) kept.encryptions += ring.unflushed;
      for (const t of ring.terms.values()) zeroize(t.key);
      this.keyring = { terms, active, unflushed: kept === active ? ring.unflushed : 0, rotation };
    });
  }

  /**
   * Whether the root key held since unseal opens `stored`, a keyring as stored (one in a snapshot):
   * it is then this cluster's keyring, as it is or was, since a keyring's terms are never dropped.
   * @throws SealedError while sealed.
   */
  opensKeyring(stored: Uint8Array): boolean {
    if (this.rootKey === undefined) throw new SealedError();
    let parsed: ParsedKeyring;
    try {
      parsed = this.decryptKeyring(stored, this.rootKey);
    } catch (err) {
      if (err instanceof IntegrityError) return false;
      throw err;
    }
    for (const t of parsed.terms.values()) zeroize(t.key);
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
    return { term: ring.active.term, installTime: new Date(ring.active.installTime), encryptions: ring.active.encryptions + ring.unflushed };
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
    const ring = await this.freshKeyring();
    let newest = 0;
    for (const term of ring.terms.keys()) newest = Math.max(newest, term);
    const next: TermKey = { term: newest + 1, key: this.freshKey(), installTime: this.clock.now(), encryptions: 0 };
    // The outgoing term's count is stored with it, final but for encryptions racing this write.
    const retiring = ring.active;
    const terms = [...ring.terms.values()].map((t) => (t === retiring ? { ...t, encryptions: t.encryptions + ring.unflushed } : t));
    try {
      await this.storeKeyring([...terms, next], ring.rotation);
    } catch (err) {
      zeroize(next.key);
      throw err;
    }
    ring.terms.set(next.term, next);
    this.activate(ring, next);
    return this.keyStatus();
  }

  /** Makes `next` the active term; this node's unflushed encryptions were under the one it replaces. */
  private activate(ring: Keyring, next: TermKey): void {
    ring.active.encryptions += ring.unflushed;
    ring.unflushed = 0;
    ring.active = next;
  }

  /**
   * The keyring about to be rewritten, brought up to date first: another node may have rotated
   * or changed settings since this one read it, and a write from the old copy would undo that.
   * @throws SealedError while sealed; whatever the write guard throws on an HA standby.
   */
  private async freshKeyring(): Promise<Keyring> {
    const ring = this.unsealedKeyring();
    this.writeGuard?.();
    await this.reloadKeyring();
    return ring;
  }

  /**
   * Writes the keyring with `terms` and `rotation` under the root key.
   * @throws SealedError when the barrier was sealed meanwhile: the caller must not then touch the
   *   wiped keyring in memory (the stored one is complete, and the next unseal reads it).
   */
  private async storeKeyring(terms: readonly TermKey[], rotation: RotationConfig): Promise<void> {
    const generation = this.generation;
    if (this.rootKey === undefined) throw new SealedError();
    await this.physical.put(KEYRING_PATH, this.encryptKeyring(terms, rotation, this.rootKey));
    if (generation !== this.generation) throw new SealedError();
  }

  private hasTerm(stored: Uint8Array): boolean {
    return this.keyring?.terms.has(termOf(stored)) ?? false;
  }

  private encrypt(path: string, plaintext: Uint8Array): Buffer {
    const ring = this.unsealedKeyring();
    // node:crypto would quietly encrypt a string as UTF-8; storage holds bytes only.
    if (!(plaintext instanceof Uint8Array)) throw new BadRequestError(`storage value for "${path}" must be a Uint8Array`);
    const out = frame(ring.active.term, cipherKeyOf(ring.active), this.nonce(), path, plaintext);
    ring.unflushed++;
    return out;
  }

  private decrypt(path: string, stored: Uint8Array): Buffer {
    const ring = this.unsealedKeyring();
    return unframe(stored, path, (term) => {
      const key = ring.terms.get(term);
      return key && cipherKeyOf(key);
    });
  }

  private encryptKeyring(terms: readonly TermKey[], rotation: RotationConfig, rootKey: Uint8Array): Buffer {
    const doc: KeyringDocument = {
      Keys: [...terms].sort((a, b) => a.term - b.term).map((t) => ({
        Term: t.term,
        Version: 1,
        Value: t.key.toString('base64'),
        InstallTime: t.installTime.toISOString(),
        ...(t.encryptions > 0 ? { encryptions: t.encryptions } : {}),
      })),
      RotationConfig: {
        Disabled: !rotation.enabled,
        MaxOperations: rotation.maxOperations,
        Interval: rotation.intervalSeconds * NANOS_PER_SECOND,
      },
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

  private decryptKeyring(stored: Uint8Array, rootKey: Uint8Array): ParsedKeyring {
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
function frame(term: number, key: Uint8Array | KeyObject, nonce: Uint8Array, path: string, plaintext: Uint8Array): Buffer {
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt32BE(term, 0);
  header[TERM_LENGTH] = VERSION_PATH_AAD;
  return Buffer.concat([header, gcmSealWithNonce(key, nonce, plaintext, Buffer.from(path, 'utf8'))]);
}

/** The keyring term a stored value was written under (its first four bytes, big-endian). */
function termOf(stored: Uint8Array): number {
  return Buffer.from(stored.buffer, stored.byteOffset, TERM_LENGTH).readUInt32BE(0);
}

function unframe(stored: Uint8Array, path: string, keyFor: (term: number) => Uint8Array | KeyObject | undefined): Buffer {
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

interface ParsedKeyring {
  readonly terms: Map<number, TermKey>;
  readonly rotation: RotationConfig;
}

function parseKeyring(plain: Buffer): ParsedKeyring {
  const malformed = (): IntegrityError => new IntegrityError('keyring is malformed');
  let doc: unknown;
  try {
    doc = JSON.parse(plain.toString('utf8'));
  } catch {
    throw malformed();
  }
  const keys = (doc as Partial<KeyringDocument> | null)?.Keys;
  if (!Array.isArray(keys) || keys.length === 0) throw malformed();
  const rotation = parseRotationConfig((doc as Partial<KeyringDocument>).RotationConfig);
  if (!rotation) throw malformed();
  const terms = new Map<number, TermKey>();
  try {
    for (const entry of keys as unknown[]) {
      const { Term, Value, InstallTime, encryptions = 0 } = (entry ?? {}) as Partial<KeyringDocument['Keys'][number]>;
      if (!Number.isInteger(Term) || Term! < 1 || Term! > 0xffffffff || terms.has(Term!)) throw malformed();
      if (typeof Value !== 'string' || typeof InstallTime !== 'string') throw malformed();
      if (!Number.isSafeInteger(encryptions) || encryptions < 0) throw malformed();
      const key = Buffer.from(Value, 'base64');
      const installTime = new Date(InstallTime);
      if (key.length !== AES256_KEY_LENGTH || Number.isNaN(installTime.getTime())) {
        zeroize(key);
        throw malformed();
      }
      terms.set(Term!, { term: Term!, key, installTime, encryptions });
    }
  } catch (err) {
    for (const t of terms.values()) zeroize(t.key);
    throw err;
  }
  return { terms, rotation };
}

/** The stored rotation settings, the defaults when there are none, undefined when they are malformed. */
function parseRotationConfig(raw: unknown): RotationConfig | undefined {
  if (raw === undefined) return DEFAULT_ROTATION_CONFIG;
  const { Disabled, MaxOperations, Interval } = (raw ?? {}) as Partial<NonNullable<KeyringDocument['RotationConfig']>>;
  if (typeof Disabled !== 'boolean' || !Number.isSafeInteger(MaxOperations) || MaxOperations! < 1) return undefined;
  if (typeof Interval !== 'number' || !Number.isFinite(Interval) || Interval < 0) return undefined;
  return { enabled: !Disabled, maxOperations: MaxOperations!, intervalSeconds: Math.floor(Interval / NANOS_PER_SECOND) };
}

/** The keyring is the barrier's own; writing it through the data API would brick the store. */
function refuseKeyring(key: string): void {
  if (key === KEYRING_PATH || key.startsWith(KEYRING_PATH + '/')) {
    throw new BadRequestError(`"${key}" is reserved for the barrier keyring`);
  }
}
