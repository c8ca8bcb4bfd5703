/**
 * Keys in storage and in memory. Storage layout (the mount's own view):
 *   policy/<name>               settings of a key (JSON)
 *   versions/<name>/<n>         material of version n (JSON), one entry per version
 * Reads go through the policy cache. Every change to a key runs under that key's lock and writes
 * the settings and the changed versions in one batch, then replaces the cached policy.
 */
import { KeyedLock, type Storage, type BatchOp } from '../../../sdk/index.js';
import { KeyPolicy, type PolicySettings } from './key-policy.js';
import { decodeVersion, encodeVersion, type KeyVersion } from './key-version.js';
import { PolicyCache } from './lru.js';

/** Storage keys under the mount. */
export const KEYS = {
  // Settings of one key.
  policy: (name: string) => `policy/${name}`,
  policyPrefix: 'policy/',
  // Material of one version of one key.
  version: (name: string, version: number) => `versions/${name}/${version}`,
  versionPrefix: (name: string) => `versions/${name}/`,
} as const;

export class KeyStore {
  private readonly cache: PolicyCache<KeyPolicy>;
  private readonly locks = new KeyedLock();
  /** Bumped by `forget`: a load that started before it must not cache what it read. */
  private generation = 0;

  /**
   * `materialRemoved` runs whenever key material leaves the store (a key deleted, versions trimmed
   * or replaced by a restore, a key changed by another node): the server's crypto core drops the
   * key schedules it keeps for recent keys (WasmCrypto.forgetKeys), so none outlives its key.
   */
  constructor(
    private readonly storage: Storage,
    cacheSize: number,
    private readonly materialRemoved: () => void = () => {},
  ) {
    this.cache = new PolicyCache(cacheSize);
  }

  get cacheSize(): number {
    return this.cache.size;
  }

  /** Runs `work` alone for this key name (creation, rotation, config, trim, deletion). */
  withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.locks.run(name, work);
  }

  /** The key as cached, without a read (and without an await): undefined when it is not in the cache. */
  cached(name: string): KeyPolicy | undefined {
    return this.cache.get(name);
  }

  async get(name: string): Promise<KeyPolicy | undefined> {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const generation = this.generation;
    const raw = await this.storage.get(KEYS.policy(name));
    if (!raw) return undefined;
    const settings = JSON.parse(Buffer.from(raw).toString('utf8')) as PolicySettings;
    const versions = new Map<number, KeyVersion>();
    for (let v = Math.max(settings.minAvailableVersion, 1); v <= settings.latestVersion; v++) {
      const stored = await this.storage.get(KEYS.version(name, v));
      if (stored) versions.set(v, decodeVersion(stored));
    }
    const policy = new KeyPolicy(settings, versions);
    // Another request may have loaded (or changed) it meanwhile; the cached one wins.
    const raced = this.cache.get(name);
    if (raced) return raced;
    if (generation === this.generation) this.cache.set(name, policy);
    return policy;
  }

  /**
   * Another node changed this key in storage: drop the cached copy, and keep any load already
   * running from caching what it read before the change.
   */
  forget(name: string): void {
    this.generation++;
    this.cache.delete(name);
    this.materialRemoved();
  }

  /**
   * Persists a policy: its settings, the versions named in `written`, and deletes `removed`; then
   * caches it. Call under the key's lock.
   */
  async save(policy: KeyPolicy, written: readonly KeyVersion[] = [], removed: readonly number[] = []): Promise<KeyPolicy> {
    const ops: BatchOp[] = [
      ...written.map((v): BatchOp => ({ type: 'put', key: KEYS.version(policy.name, v.version), value: encodeVersion(v) })),
      ...removed.map((v): BatchOp => ({ type: 'delete', key: KEYS.version(policy.name, v) })),
      { type: 'put', key: KEYS.policy(policy.name), value: Buffer.from(JSON.stringify(policy.settings), 'utf8') },
    ];
    await this.storage.batch(ops);
    this.cache.set(policy.name, policy);
    if (removed.length > 0) this.materialRemoved();
    return policy;
  }

  /**
   * Persists a key as a whole — its settings and exactly its versions — deleting every other
   * stored version of that name (a restore over an existing key). Call under the key's lock.
   */
  async replace(policy: KeyPolicy): Promise<KeyPolicy> {
    const kept = new Set([...policy.versions.keys()].map(String));
    // Only numbered entries: a key named `import` shares its prefix with the wrapping key's folder.
    const stored = await this.storage.list(KEYS.versionPrefix(policy.name));
    const stale = stored.filter((v) => /^\d+$/.test(v) && !kept.has(v)).map(Number);
    return this.save(policy, [...policy.versions.values()], stale);
  }

  /** Deletes a key and all its versions. Call under the key's lock. */
  async delete(name: string): Promise<void> {
    const versions = await this.storage.list(KEYS.versionPrefix(name));
    await this.storage.batch([
      { type: 'delete', key: KEYS.policy(name) },
      ...versions.map((v): BatchOp => ({ type: 'delete', key: KEYS.versionPrefix(name) + v })),
    ]);
    this.cache.delete(name);
    this.materialRemoved();
  }

  /** Key names. Folders are left out: names cannot contain `/`, so a folder (`import/`, the wrapping key's) holds no usable key. */
  async list(): Promise<string[]> {
    return (await this.storage.list(KEYS.policyPrefix)).filter((entry) => !entry.endsWith('/'));
  }
}
