/**
 * How tokens are kept behind the barrier; what happens to them is token-store.ts's. A service
 * token's entry is stored under the salted hash of its id (the id itself is never stored), with an
 * accessor index, a parent → child index for revocation and an expiry index for the sweep. Live
 * entries are cached, and each token has a queue of its own so changes to one never interleave.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Storage } from '../../storage/storage.js';
import type { TokenEntry } from './token-entry.js';

/** Storage keys (behind the barrier). */
export const KEYS = {
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

/** How many live entries are cached, and how many ids' hashes are remembered; oldest dropped first. */
const CACHE_SIZE = 10_000;
const RECENT_HASHES = 1_000;

export class TokenRecords {
  private salt: Buffer | undefined;
  private batchKey: Buffer | undefined;
  /** Per-token queues, so concurrent uses, renewals and revocations of one token never interleave. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /**
   * Live entries by hash, so a request does not read and decrypt its token from storage every time.
   * Every write of an entry goes through this class and updates it; bounded, oldest dropped first.
   */
  private readonly cache = new Map<string, TokenEntry>();
  /**
   * Salted hashes of the ids of tokens found live lately, so a token used again is not hashed
   * again (hashing is most of a cached lookup). Only tokens that exist get in, so guesses cannot
   * crowd it; a hash never changes while the salt stays, and the map goes with the salt.
   */
  private recentHashes = new Map<string, string>();
  /**
   * Bumped around every change to a stored entry. A read from storage is cached only if no change
   * happened while it ran, so a slow read can never put an older entry back over a newer one.
   */
  private mutations = 0;
  /** Secrets being read or created, by storage key. */
  private readonly creating = new Map<string, Promise<Buffer>>();

  constructor(readonly storage: Storage) {}

  /** Forgets cached keys and entries (on seal). */
  reset(): void {
    this.salt = undefined;
    this.recentHashes = new Map();
    this.batchKey = undefined;
    this.cache.clear();
  }

  /** Creates the per-server secrets (hash salt, batch-token key) now if they are missing. */
  async ensureSecrets(): Promise<void> {
    this.salt = await this.secret(KEYS.salt, this.salt);
    this.batchKey = await this.secret(KEYS.batchKey, this.batchKey);
  }

  /** Another node changed the stored entry at `key` (HA): forget what was cached from it. */
  remoteChanged(key: string): void {
    if (key.startsWith(KEYS.idPrefix)) {
      this.forget(key.slice(KEYS.idPrefix.length));
    } else if (key === KEYS.salt) {
      this.salt = undefined;
      this.recentHashes = new Map();
    } else if (key.startsWith('sys/token/')) {
      // Other token indexes are read from storage each time; the batch-token key is kept once made.
      this.mutations++;
    }
  }

  /** The salted hash of a token id, as stored in `parent`. */
  hashToken(id: string): Promise<string> {
    return this.hashOf(`id:${id}`);
  }

  hashAccessor(accessor: string): Promise<string> {
    return this.hashOf(`accessor:${accessor}`);
  }

  /**
   * The hash and cached entry of a token id when both are at hand without a turn of the event loop
   * (the salt loaded, the entry cached); the caller decides whether the entry is still live.
   */
  cached(id: string): { hash: string; entry: TokenEntry } | undefined {
    const salt = this.salt;
    if (!salt) return undefined;
    const recent = this.recentHashes.get(id);
    const hash = recent ?? saltedHash(salt, `id:${id}`);
    const entry = this.cache.get(hash);
    if (!entry) return undefined;
    return { hash, entry };
  }

  /** Remembers the hash of an id found live, so its next lookup does not hash it again. */
  rememberHash(id: string, hash: string): void {
    if (this.recentHashes.has(id)) return;
    if (this.recentHashes.size >= RECENT_HASHES) this.recentHashes.clear();
    this.recentHashes.set(id, hash);
  }

  /** A stored service token's entry, from the cache or storage; undefined when there is none. */
  async read(hash: string): Promise<TokenEntry | undefined> {
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

  /** Stores a changed entry of an existing token, and caches it. */
  async write(hash: string, entry: TokenEntry): Promise<void> {
    await this.storage.put(KEYS.id(hash), encode({ ...entry, hash }));
    this.remember(hash, entry);
  }

  /** Caches an entry just stored. */
  remember(hash: string, entry: TokenEntry): void {
    this.mutations++;
    this.cache.delete(hash);
    this.cache.set(hash, entry);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
  }

  /** Drops a cached entry, and keeps a read that raced its change from caching it again. */
  forget(hash: string): void {
    this.mutations++;
    this.cache.delete(hash);
  }

  /** The batch-token key; created only when `create`, since without one no batch token was ever issued. */
  async batchTokenKey(create: boolean): Promise<Buffer | undefined> {
    if (this.batchKey) return this.batchKey;
    if (create) return (this.batchKey = await this.secret(KEYS.batchKey, this.batchKey));
    const stored = await this.storage.get(KEYS.batchKey);
    if (stored) this.batchKey = Buffer.from(stored);
    return this.batchKey;
  }

  /** Runs `work` after every earlier `work` for the same key has finished. */
  async withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  private async hashOf(text: string): Promise<string> {
    const salt = this.salt ?? (this.salt = await this.secret(KEYS.salt, this.salt));
    return saltedHash(salt, text);
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
}

export function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decode<T>(raw: Uint8Array): T {
  return JSON.parse(Buffer.from(raw).toString('utf8')) as T;
}

/** The salted SHA-256 of a token id or accessor (with its `id:`/`accessor:` prefix), hex: the key it is stored under. */
function saltedHash(salt: Buffer, text: string): string {
  return hash('sha256', Buffer.concat([salt, Buffer.from(text, 'utf8')]), 'hex');
}
