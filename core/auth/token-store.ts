/**
 * Tokens: what happens to them — creation, lookup, spending uses, renewal, revocation of a token
 * and its descendants, the expiry sweep. Service tokens are persisted behind the barrier
 * (token-records.ts keeps them: salted hashes, indexes, the cache). Batch tokens are
 * self-contained: the entry encrypted under a key kept behind the barrier, never persisted, not
 * renewable, not revocable.
 */
import type { Storage } from '../../storage/storage.js';
import { gcmOpen, gcmSeal } from '../../storage/aead.js';
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Clock } from '../clock.js';
import { base62, generateServiceTokenId, type ResolvedToken, type TokenEntry } from './token-entry.js';
import { decode, encode, KEYS, TokenRecords } from './token-records.js';

export { generateServiceTokenId, type ResolvedToken, type TokenAuthOrigin, type TokenEntry, type TokenType } from './token-entry.js';

/** Associated data of batch tokens, so no other ciphertext under the batch key passes as one. */
const BATCH_AAD = Buffer.from('keywarden batch token v1');

export class TokenStore {
  private readonly records: TokenRecords;
  /** Called with the hash of every token revoked (its cubbyhole goes with it). */
  private readonly revokedListeners: ((hash: string) => Promise<void>)[] = [];
  /** Tokens this node created and revoked since it started (read by sys/metrics). */
  readonly counts = { created: { service: 0, batch: 0 }, revoked: 0 };

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {
    this.records = new TokenRecords(storage);
  }

  /** Runs `listener` after each token's revocation (revoked, expired, or its tree revoked). */
  onRevoked(listener: (hash: string) => Promise<void>): void {
    this.revokedListeners.push(listener);
  }

  /** Forgets cached keys and entries (on seal). */
  reset(): void {
    this.records.reset();
  }

  /**
   * Creates the per-server secrets (hash salt, batch-token key) now if they are missing. The HA
   * active node calls it when it takes the role, so a standby never has to write them on first use.
   */
  ensureSecrets(): Promise<void> {
    return this.records.ensureSecrets();
  }

  /** Another node changed the stored entry at `key` (HA): forget what was cached from it. */
  remoteChanged(key: string): void {
    this.records.remoteChanged(key);
  }

  now(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  /** The salted hash of a token id, as stored in `parent`. */
  hashToken(id: string): Promise<string> {
    return this.records.hashToken(id);
  }

  /** Persists a new service token, or seals a batch token; returns its id. */
  async create(entry: Omit<TokenEntry, 'accessor'>, requestedId?: string): Promise<{ id: string; entry: TokenEntry }> {
    if (entry.type === 'batch') {
      const full: TokenEntry = { ...entry, accessor: '' };
      const key = (await this.records.batchTokenKey(true))!;
      const sealed = gcmSeal(key, Buffer.from(JSON.stringify(full)), BATCH_AAD);
      this.counts.created.batch++;
      return { id: `hvb.${sealed.toString('base64url')}`, entry: full };
    }
    const id = requestedId ?? generateServiceTokenId();
    const full: TokenEntry = { ...entry, accessor: base62(24) };
    const hash = await this.hashToken(id);
    if (await this.storage.get(KEYS.id(hash))) throw new BadRequestError('cannot create a token with a duplicate ID');
    const accessorHash = await this.records.hashAccessor(full.accessor);
    await this.storage.batch([
      { type: 'put', key: KEYS.id(hash), value: encode({ ...full, hash }) },
      { type: 'put', key: KEYS.accessor(accessorHash), value: encode({ accessor: full.accessor, hash }) },
      ...(full.parent ? [{ type: 'put' as const, key: KEYS.child(full.parent, hash), value: new Uint8Array() }] : []),
      ...(full.expireTime ? [{ type: 'put' as const, key: KEYS.expiry(full.expireTime, hash), value: new Uint8Array() }] : []),
    ]);
    this.records.remember(hash, full);
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
    const found = await this.records.read(hash);
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
    if (id.length === 0 || id.length > 8192 || id.startsWith('hvb.')) return undefined;
    const found = this.records.cached(id);
    if (!found || (found.entry.expireTime !== 0 && found.entry.expireTime <= this.now())) return undefined;
    this.records.rememberHash(id, found.hash);
    return { id, hash: found.hash, entry: found.entry };
  }

  /** Whether a request spends one of the token's uses (`use` has storage to write). */
  spendsUse(token: ResolvedToken): boolean {
    return token.entry.numUses !== 0 && token.entry.type !== 'batch';
  }

  private async lookupBatch(id: string): Promise<ResolvedToken | undefined> {
    let entry: TokenEntry;
    // No batch key yet means no batch token was ever issued: nothing to look up, nothing to create.
    const key = await this.records.batchTokenKey(false);
    if (!key) return undefined;
    try {
      const plain = gcmOpen(key, Buffer.from(id.slice(4), 'base64url'), BATCH_AAD);
      entry = JSON.parse(plain.toString('utf8')) as TokenEntry;
    } catch (err) {
      if (err instanceof IntegrityError || err instanceof SyntaxError) return undefined;
      throw err;
    }
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) return undefined;
    if (entry.parent && !(await this.records.read(entry.parent))) return undefined;
    return { id, hash: '', entry };
  }

  /** The token behind an accessor (service tokens only). */
  async lookupAccessor(accessor: string): Promise<{ hash: string; entry: TokenEntry } | undefined> {
    if (accessor.length === 0 || accessor.length > 256) return undefined;
    const raw = await this.storage.get(KEYS.accessor(await this.records.hashAccessor(accessor)));
    if (!raw) return undefined;
    const { hash } = decode<{ accessor: string; hash: string }>(raw);
    const entry = await this.records.read(hash);
    if (!entry || entry.accessor !== accessor) return undefined;
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) {
      await this.revokeTree(hash);
      return undefined;
    }
    return { hash, entry };
  }

  /**
   * The live service token stored under a salted hash (a lease id names one), or undefined. An
   * expired one is revoked on the way, as `lookup` does.
   */
  async lookupHash(hash: string): Promise<{ hash: string; entry: TokenEntry } | undefined> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
    const entry = await this.records.read(hash);
    if (!entry) return undefined;
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) {
      await this.revokeTree(hash);
      return undefined;
    }
    return { hash, entry };
  }

  /**
   * Every stored service token, read one at a time (expired ones not yet swept included: callers
   * check the expiry). A scan: the callers are operator actions (listing leases, revoking a prefix).
   */
  async *stored(): AsyncGenerator<{ hash: string; entry: TokenEntry }> {
    for (const hash of await this.storage.list(KEYS.idPrefix)) {
      const entry = await this.records.read(hash);
      if (entry) yield { hash, entry };
    }
  }

  /** How many service tokens are stored (expired ones not swept yet included). */
  async countStored(): Promise<number> {
    return (await this.storage.list(KEYS.idPrefix)).length;
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
    return this.records.withLock(token.hash, async () => {
      const current = await this.records.read(token.hash);
      if (!current || current.numUses <= 0) return { allowed: false, last: false };
      if (current.numUses === 1) {
        // Mark it spent now, so a concurrent request cannot use it too; it is revoked after this request.
        await this.records.write(token.hash, { ...current, numUses: -1 });
        return { allowed: true, last: true };
      }
      await this.records.write(token.hash, { ...current, numUses: current.numUses - 1 });
      return { allowed: true, last: false };
    });
  }

  /** Writes a renewed entry (new ttl and expiry) for a service token. */
  async saveRenewal(hash: string, update: (entry: TokenEntry) => TokenEntry): Promise<TokenEntry | undefined> {
    return this.records.withLock(hash, async () => {
      const current = await this.records.read(hash);
      if (!current) return undefined;
      const next = update(current);
      await this.storage.batch([
        { type: 'put', key: KEYS.id(hash), value: encode({ ...next, hash }) },
        ...(current.expireTime ? [{ type: 'delete' as const, key: KEYS.expiry(current.expireTime, hash) }] : []),
        ...(next.expireTime ? [{ type: 'put' as const, key: KEYS.expiry(next.expireTime, hash), value: new Uint8Array() }] : []),
      ]);
      this.records.remember(hash, next);
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
      await this.records.withLock(childHash, async () => {
        const entry = await this.records.read(childHash);
        if (entry) await this.records.write(childHash, { ...entry, parent: '' });
      });
    }
    await this.revokeOne(hash);
  }

  private async revokeOne(hash: string): Promise<void> {
    await this.records.withLock(hash, async () => {
      const entry = await this.records.read(hash);
      const ops: { type: 'delete'; key: string }[] = [{ type: 'delete', key: KEYS.id(hash) }];
      if (entry) {
        ops.push({ type: 'delete', key: KEYS.accessor(await this.records.hashAccessor(entry.accessor)) });
        if (entry.parent) ops.push({ type: 'delete', key: KEYS.child(entry.parent, hash) });
        if (entry.expireTime) ops.push({ type: 'delete', key: KEYS.expiry(entry.expireTime, hash) });
      }
      for (const child of await this.storage.list(KEYS.children(hash))) ops.push({ type: 'delete', key: KEYS.children(hash) + child });
      // Forget it before and after: a lookup racing this revocation must not keep it cached.
      this.records.forget(hash);
      await this.storage.batch(ops);
      this.records.forget(hash);
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
      const entry = await this.records.read(hash);
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
      const done = await this.records.withLock(hash, async () => {
        const entry = await this.records.read(hash);
        if (!entry || !entry.path.startsWith(from)) return false;
        const origin = entry.origin && entry.origin.mountPath === from ? { ...entry.origin, mountPath: to } : entry.origin;
        const next: TokenEntry = { ...entry, path: to + entry.path.slice(from.length), ...(origin ? { origin } : {}) };
        await this.records.write(hash, next);
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
      const entry = await this.records.read(hash);
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
