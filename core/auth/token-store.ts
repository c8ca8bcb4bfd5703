/**
 * Tokens. Service tokens are persisted behind the barrier under a salted hash of their id (the id
 * itself is never stored), with an accessor index, a parent → child index for revocation, and an
 * expiry index the periodic timer sweeps. Batch tokens are self-contained: the entry encrypted
 * under a key kept behind the barrier, never persisted, not renewable, not revocable.
 */
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Storage } from '../../storage/storage.js';
import { gcmOpen, gcmSeal } from '../../storage/aead.js';
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Clock } from '../clock.js';

/** Storage keys (behind the barrier). */
const KEYS = {
  // Per-server random salt for token and accessor hashes, so a storage dump cannot be matched to tokens.
  salt: 'sys/token/salt',
  // One entry per live service token, keyed by the salted hash of its id.
  id: (hash: string) => `sys/token/id/${hash}`,
  idPrefix: 'sys/token/id/',
  // Salted hash of an accessor → { accessor, hash }, for lookup/revoke by accessor and LIST accessors.
  accessor: (hash: string) => `sys/token/accessor/${hash}`,
  accessorPrefix: 'sys/token/accessor/',
  // parent hash / child hash → "", so revoking a parent finds its children without a scan.
  child: (parent: string, child: string) => `sys/token/parent/${parent}/${child}`,
  children: (parent: string) => `sys/token/parent/${parent}/`,
  // Zero-padded expiry time and hash → "", so the sweep reads expired tokens in time order.
  expiry: (expireTime: number, hash: string) => `sys/token/expire/${String(expireTime).padStart(12, '0')}-${hash}`,
  expiryPrefix: 'sys/token/expire/',
  // The AES-256-GCM key batch tokens are encrypted under.
  batchKey: 'sys/token/batch-key',
} as const;

/** Associated data of batch tokens, so no other ciphertext under the batch key passes as one. */
const BATCH_AAD = Buffer.from('keywarden batch token v1');

export type TokenType = 'service' | 'batch';

/** What a login recorded about itself, so renewal can ask the auth method again. */
export interface TokenAuthOrigin {
  readonly mountAccessor: string;
  readonly mountPath: string;
  readonly internalData?: Readonly<Record<string, unknown>>;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly policies: readonly string[];
  readonly displayName?: string;
}

export interface TokenEntry {
  readonly accessor: string;
  /** Salted hash of the parent's id; '' for an orphan. */
  readonly parent: string;
  readonly policies: readonly string[];
  readonly path: string;
  readonly meta: Readonly<Record<string, string>> | null;
  readonly displayName: string;
  /** Uses left; 0 = unlimited. */
  readonly numUses: number;
  /** Seconds since the epoch. */
  readonly creationTime: number;
  /** The TTL the token was created (or last renewed) with, seconds; 0 = never expires. */
  readonly ttl: number;
  /** The TTL at creation, seconds. */
  readonly creationTtl: number;
  /** Seconds since the epoch; 0 = never. */
  readonly expireTime: number;
  readonly explicitMaxTtl: number;
  /** The effective maximum lifetime from creation, seconds; 0 = none (periodic and root tokens). */
  readonly maxTtl: number;
  readonly period: number;
  readonly renewable: boolean;
  readonly type: TokenType;
  readonly boundCidrs: readonly string[];
  readonly entityId: string;
  readonly role: string;
  readonly lastRenewalTime: number;
  readonly origin?: TokenAuthOrigin;
}

/** A live token as lookups return it: the entry and the handle to act on it. */
export interface ResolvedToken {
  readonly id: string;
  /** Salted hash of the id ('' for batch tokens, which have none). */
  readonly hash: string;
  readonly entry: TokenEntry;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function base62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}

/** `hvs.` + 24 base62 characters (≈143 bits), the service-token shape Vault clients expect. */
export function generateServiceTokenId(): string {
  return `hvs.${base62(24)}`;
}

export class TokenStore {
  private salt: Buffer | undefined;
  private batchKey: Buffer | undefined;
  /** Per-token queues, so concurrent uses, renewals and revocations of one token never interleave. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /**
   * Live entries by hash, so a request does not read and decrypt its token from storage every time.
   * Every write of an entry goes through this class and updates it; bounded, oldest dropped first.
   */
  private readonly cache = new Map<string, TokenEntry>();
  private static readonly CACHE_SIZE = 10_000;
  /**
   * Salted hashes of the ids of tokens found live lately, so a token used again is not hashed
   * again (hashing is most of a cached lookup). Only tokens that exist get in, so guesses cannot
   * crowd it; a hash never changes while the salt stays, and the map goes with the salt.
   */
  private recentHashes = new Map<string, string>();
  private static readonly RECENT_HASHES = 1_000;
  /**
   * Bumped around every change to a stored entry. A read from storage is cached only if no change
   * happened while it ran, so a slow read can never put an older entry back over a newer one.
   */
  private mutations = 0;
  /** Called with the hash of every token revoked (its cubbyhole goes with it). */
  private readonly revokedListeners: ((hash: string) => Promise<void>)[] = [];
  /** Secrets being read or created, by storage key. */
  private readonly creating = new Map<string, Promise<Buffer>>();
  /** Tokens this node created and revoked since it started (read by sys/metrics). */
  readonly counts = { created: { service: 0, batch: 0 }, revoked: 0 };

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** Runs `listener` after each token's revocation (revoked, expired, or its tree revoked). */
  onRevoked(listener: (hash: string) => Promise<void>): void {
    this.revokedListeners.push(listener);
  }

  /** Forgets cached keys and entries (on seal). */
  reset(): void {
    this.salt = undefined;
    this.recentHashes = new Map();
    this.batchKey = undefined;
    this.cache.clear();
  }

  /**
   * Creates the per-server secrets (hash salt, batch-token key) now if they are missing. The HA
   * active node calls it when it takes the role, so a standby never has to write them on first use.
   */
  async ensureSecrets(): Promise<void> {
    this.salt = await this.secret(KEYS.salt, this.salt);
    this.batchKey = await this.secret(KEYS.batchKey, this.batchKey);
  }

  /** Another node changed the stored entry at `key` (HA): forget what was cached from it. */
  remoteChanged(key: string): void {
    if (key.startsWith('sys/token/id/')) {
      this.mutations++;
      this.cache.delete(key.slice('sys/token/id/'.length));
    } else if (key === KEYS.salt) {
      this.salt = undefined;
      this.recentHashes = new Map();
    } else if (key.startsWith('sys/token/')) {
      // Other token indexes are read from storage each time; the batch-token key is kept once made.
      this.mutations++;
    }
  }

  private remember(hash: string, entry: TokenEntry): void {
    this.mutations++;
    this.cache.delete(hash);
    this.cache.set(hash, entry);
    if (this.cache.size > TokenStore.CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
  }

  now(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  /**
   * A per-server secret, created on first use. Concurrent first uses share one creation: two would
   * each store a key, and the one kept in memory could differ from the one kept in storage.
   */
  private async secret(key: string, cached: Buffer | undefined): Promise<Buffer> {
    if (cached) return cached;
    let pending = this.creating.get(key);
    if (!pending) {
      pending = (async () => {
        const stored = await this.storage.get(key);
        if (stored) return Buffer.from(stored);
        const fresh = randomBytes(32);
        await this.storage.put(key, fresh);
        return fresh;
      })();
      this.creating.set(key, pending);
      const done = () => {
        if (this.creating.get(key) === pending) this.creating.delete(key);
      };
      pending.then(done, done);
    }
    return pending;
  }

  private async hashOf(text: string): Promise<string> {
    const salt = this.salt ?? (this.salt = await this.secret(KEYS.salt, this.salt));
    return saltedHash(salt, text);
  }

  /** The salted hash of a token id, as stored in `parent`. */
  hashToken(id: string): Promise<string> {
    return this.hashOf(`id:${id}`);
  }

  private hashAccessor(accessor: string): Promise<string> {
    return this.hashOf(`accessor:${accessor}`);
  }

  private async withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  /** Persists a new service token, or seals a batch token; returns its id. */
  async create(entry: Omit<TokenEntry, 'accessor'>, requestedId?: string): Promise<{ id: string; entry: TokenEntry }> {
    if (entry.type === 'batch') {
      const full: TokenEntry = { ...entry, accessor: '' };
      this.batchKey = await this.secret(KEYS.batchKey, this.batchKey);
      const sealed = gcmSeal(this.batchKey, Buffer.from(JSON.stringify(full)), BATCH_AAD);
      this.counts.created.batch++;
      return { id: `hvb.${sealed.toString('base64url')}`, entry: full };
    }
    const id = requestedId ?? generateServiceTokenId();
    const full: TokenEntry = { ...entry, accessor: base62(24) };
    const hash = await this.hashToken(id);
    if (await this.storage.get(KEYS.id(hash))) throw new BadRequestError('cannot create a token with a duplicate ID');
    const accessorHash = await this.hashAccessor(full.accessor);
    await this.storage.batch([
      { type: 'put', key: KEYS.id(hash), value: encode({ ...full, hash }) },
      { type: 'put', key: KEYS.accessor(accessorHash), value: encode({ accessor: full.accessor, hash }) },
      ...(full.parent ? [{ type: 'put' as const, key: KEYS.child(full.parent, hash), value: new Uint8Array() }] : []),
      ...(full.expireTime ? [{ type: 'put' as const, key: KEYS.expiry(full.expireTime, hash), value: new Uint8Array() }] : []),
    ]);
    this.remember(hash, full);
    this.counts.created.service++;
    return { id, entry: full };
  }

  /**
   * Mints the root token (init): policies ["root"], never expires, not renewable, an orphan. `id`
   * is dev mode's `-dev-root-token-id`; otherwise the id is random.
   */
  async createRootToken(id?: string): Promise<string> {
    const { id: created } = await this.create({
      parent: '',
      policies: ['root'],
      path: 'auth/token/root',
      meta: null,
      displayName: 'root',
      numUses: 0,
      creationTime: this.now(),
      ttl: 0,
      creationTtl: 0,
      expireTime: 0,
      explicitMaxTtl: 0,
      maxTtl: 0,
      period: 0,
      renewable: false,
      type: 'service',
      boundCidrs: [],
      entityId: '',
      role: '',
      lastRenewalTime: 0,
    }, id);
    return created;
  }

  /**
   * The live token for an id, or undefined when it is malformed, unknown, expired, out of uses or
   * (for a batch token) its parent is gone. An expired service token is deleted on the way.
   */
  async lookup(id: string): Promise<ResolvedToken | undefined> {
    if (id.length === 0 || id.length > 8192) return undefined;
    if (id.startsWith('hvb.')) return this.lookupBatch(id);
    const hash = await this.hashToken(id);
    const found = await this.readByHash(hash);
    if (!found) return undefined;
    if (found.expireTime !== 0 && found.expireTime <= this.now()) {
      await this.revokeTree(hash);
      return undefined;
    }
    return { id, hash, entry: found };
  }

  /**
   * What `lookup` answers, when the answer is at hand without a turn of the event loop (the salt
   * loaded, the entry cached and live): most requests carry a token used a moment ago. Undefined
   * when `lookup` must decide (it reads storage, and revokes an expired token on the way).
   */
  lookupCached(id: string): ResolvedToken | undefined {
    const salt = this.salt;
    if (!salt || id.length === 0 || id.length > 8192 || id.startsWith('hvb.')) return undefined;
    const recent = this.recentHashes.get(id);
    const hash = recent ?? saltedHash(salt, `id:${id}`);
    const entry = this.cache.get(hash);
    if (!entry || (entry.expireTime !== 0 && entry.expireTime <= this.now())) return undefined;
    if (recent === undefined) {
      if (this.recentHashes.size >= TokenStore.RECENT_HASHES) this.recentHashes.clear();
      this.recentHashes.set(id, hash);
    }
    return { id, hash, entry };
  }

  /** Whether a request spends one of the token's uses (`use` has storage to write). */
  spendsUse(token: ResolvedToken): boolean {
    return token.entry.numUses !== 0 && token.entry.type !== 'batch';
  }

  private async lookupBatch(id: string): Promise<ResolvedToken | undefined> {
    let entry: TokenEntry;
    // No batch key yet means no batch token was ever issued: nothing to look up, nothing to create.
    if (!this.batchKey) {
      const stored = await this.storage.get(KEYS.batchKey);
      if (!stored) return undefined;
      this.batchKey = Buffer.from(stored);
    }
    try {
      const plain = gcmOpen(this.batchKey, Buffer.from(id.slice(4), 'base64url'), BATCH_AAD);
      entry = JSON.parse(plain.toString('utf8')) as TokenEntry;
    } catch (err) {
      if (err instanceof IntegrityError || err instanceof SyntaxError) return undefined;
      throw err;
    }
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) return undefined;
    if (entry.parent && !(await this.readByHash(entry.parent))) return undefined;
    return { id, hash: '', entry };
  }

  private async readByHash(hash: string): Promise<TokenEntry | undefined> {
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const before = this.mutations;
    const raw = await this.storage.get(KEYS.id(hash));
    if (!raw) return undefined;
    const parsed = decode<TokenEntry & { hash: string }>(raw);
    const stored = Buffer.from(parsed.hash, 'hex');
    const wanted = Buffer.from(hash, 'hex');
    if (stored.length !== wanted.length || !timingSafeEqual(stored, wanted)) return undefined;
    const { hash: _hash, ...entry } = parsed;
    if (this.mutations === before) this.remember(hash, entry);
    return entry;
  }

  /** The token behind an accessor (service tokens only). */
  async lookupAccessor(accessor: string): Promise<{ hash: string; entry: TokenEntry } | undefined> {
    if (accessor.length === 0 || accessor.length > 256) return undefined;
    const raw = await this.storage.get(KEYS.accessor(await this.hashAccessor(accessor)));
    if (!raw) return undefined;
    const { hash } = decode<{ accessor: string; hash: string }>(raw);
    const entry = await this.readByHash(hash);
    if (!entry || entry.accessor !== accessor) return undefined;
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) {
      await this.revokeTree(hash);
      return undefined;
    }
    return { hash, entry };
  }

  /** Every live accessor. */
  async listAccessors(): Promise<string[]> {
    const out: string[] = [];
    for (const key of await this.storage.list(KEYS.accessorPrefix)) {
      const raw = await this.storage.get(KEYS.accessorPrefix + key);
      if (raw) out.push(decode<{ accessor: string }>(raw).accessor);
    }
    return out.sort();
  }

  /**
   * Spends one use of a limited-use token. Returns false when none was left (the token is then
   * gone), and whether this was the last use (the caller revokes it after the request).
   */
  async use(token: ResolvedToken): Promise<{ allowed: boolean; last: boolean }> {
    if (!this.spendsUse(token)) return { allowed: true, last: false };
    return this.withLock(token.hash, async () => {
      const current = await this.readByHash(token.hash);
      if (!current || current.numUses <= 0) return { allowed: false, last: false };
      if (current.numUses === 1) {
        // Mark it spent now, so a concurrent request cannot use it too; it is revoked after this request.
        await this.storage.put(KEYS.id(token.hash), encode({ ...current, numUses: -1, hash: token.hash }));
        this.remember(token.hash, { ...current, numUses: -1 });
        return { allowed: true, last: true };
      }
      await this.storage.put(KEYS.id(token.hash), encode({ ...current, numUses: current.numUses - 1, hash: token.hash }));
      this.remember(token.hash, { ...current, numUses: current.numUses - 1 });
      return { allowed: true, last: false };
    });
  }

  /** Writes a renewed entry (new ttl and expiry) for a service token. */
  async saveRenewal(hash: string, update: (entry: TokenEntry) => TokenEntry): Promise<TokenEntry | undefined> {
    return this.withLock(hash, async () => {
      const current = await this.readByHash(hash);
      if (!current) return undefined;
      const next = update(current);
      await this.storage.batch([
        { type: 'put', key: KEYS.id(hash), value: encode({ ...next, hash }) },
        ...(current.expireTime ? [{ type: 'delete' as const, key: KEYS.expiry(current.expireTime, hash) }] : []),
        ...(next.expireTime ? [{ type: 'put' as const, key: KEYS.expiry(next.expireTime, hash), value: new Uint8Array() }] : []),
      ]);
      this.remember(hash, next);
      return next;
    });
  }

  /** Revokes a token and every descendant. */
  async revokeTree(hash: string): Promise<void> {
    for (const child of await this.storage.list(KEYS.children(hash))) {
      await this.revokeTree(child.replace(/\/$/, ''));
    }
    await this.revokeOne(hash);
  }

  /** Revokes a token; its children become orphans. */
  async revokeOrphan(hash: string): Promise<void> {
    for (const child of await this.storage.list(KEYS.children(hash))) {
      const childHash = child.replace(/\/$/, '');
      await this.withLock(childHash, async () => {
        const entry = await this.readByHash(childHash);
        if (entry) {
          await this.storage.put(KEYS.id(childHash), encode({ ...entry, parent: '', hash: childHash }));
          this.remember(childHash, { ...entry, parent: '' });
        }
      });
    }
    await this.revokeOne(hash);
  }

  private async revokeOne(hash: string): Promise<void> {
    await this.withLock(hash, async () => {
      const entry = await this.readByHash(hash);
      const ops: { type: 'delete'; key: string }[] = [{ type: 'delete', key: KEYS.id(hash) }];
      if (entry) {
        ops.push({ type: 'delete', key: KEYS.accessor(await this.hashAccessor(entry.accessor)) });
        if (entry.parent) ops.push({ type: 'delete', key: KEYS.child(entry.parent, hash) });
        if (entry.expireTime) ops.push({ type: 'delete', key: KEYS.expiry(entry.expireTime, hash) });
      }
      for (const child of await this.storage.list(KEYS.children(hash))) ops.push({ type: 'delete', key: KEYS.children(hash) + child });
      // Forget it before and after: a lookup racing this revocation must not keep it cached.
      this.mutations++;
      this.cache.delete(hash);
      await this.storage.batch(ops);
      this.mutations++;
      this.cache.delete(hash);
      if (entry) this.counts.revoked++;
      for (const listener of this.revokedListeners) await listener(hash);
    });
  }

  /**
   * Revokes every token of an auth method being disabled: issued through a path under its prefix,
   * or minted by a login through it (its accessor), which also catches a token whose path a move
   * of the method (`movePathPrefix`) did not get to rewrite.
   */
  async revokeByMount(prefix: string, accessor: string): Promise<number> {
    let revoked = 0;
    for (const hash of await this.storage.list(KEYS.idPrefix)) {
      const entry = await this.readByHash(hash);
      if (entry && (entry.path.startsWith(prefix) || entry.origin?.mountAccessor === accessor)) {
        await this.revokeTree(hash);
        revoked++;
      }
    }
    return revoked;
  }

  /**
   * Rewrites the path of every service token issued under `from` to the same path under `to` (an
   * auth method moved). Batch tokens carry their path inside themselves and keep the old one.
   */
  async movePathPrefix(from: string, to: string): Promise<number> {
    let moved = 0;
    for (const hash of await this.storage.list(KEYS.idPrefix)) {
      const done = await this.withLock(hash, async () => {
        const entry = await this.readByHash(hash);
        if (!entry || !entry.path.startsWith(from)) return false;
        const origin = entry.origin && entry.origin.mountPath === from ? { ...entry.origin, mountPath: to } : entry.origin;
        const next: TokenEntry = { ...entry, path: to + entry.path.slice(from.length), ...(origin ? { origin } : {}) };
        await this.storage.put(KEYS.id(hash), encode({ ...next, hash }));
        this.remember(hash, next);
        return true;
      });
      if (done) moved++;
    }
    return moved;
  }

  /** Deletes every token whose expiry has passed (run by the host's periodic timer). Returns how many. */
  async sweepExpired(): Promise<number> {
    const now = this.now();
    let swept = 0;
    for (const key of await this.storage.list(KEYS.expiryPrefix)) {
      const [time, hash] = key.split('-') as [string, string];
      if (Number(time) > now) break;
      const entry = await this.readByHash(hash);
      if (entry && entry.expireTime !== 0 && entry.expireTime <= now) {
        await this.revokeTree(hash);
        swept++;
      } else {
        // A stale index entry (the token was renewed or revoked meanwhile).
        await this.storage.delete(KEYS.expiryPrefix + key);
      }
    }
    return swept;
  }
}

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function decode<T>(raw: Uint8Array): T {
  return JSON.parse(Buffer.from(raw).toString('utf8')) as T;
}

/** The salted SHA-256 of a token id or accessor (with its `id:`/`accessor:` prefix), hex: the key it is stored under. */
function saltedHash(salt: Buffer, text: string): string {
  return hash('sha256', Buffer.concat([salt, Buffer.from(text, 'utf8')]), 'hex');
}
