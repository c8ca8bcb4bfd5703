/**
 * ACL policies: stored behind the barrier, parsed once and cached, with the built-in `root` (every
 * capability, never stored), `default` (created at unseal when missing, never overwritten) and the
 * reserved names (`builtin.ts`), which can be neither written nor deleted; `response-wrapping`
 * always reads as its fixed text. ACLs built from a token's policies are cached by policy set and
 * identity.
 */
import type { Storage } from '../../storage/storage.js';
import { BadRequestError } from '../errors.js';
import { ACL, type IdentityContext } from './policy/acl.js';
import { parsePolicy, type Policy } from './policy/policy.js';
import { DEFAULT_POLICY, RESERVED_POLICY_NAMES, RESPONSE_WRAPPING_POLICY, RESPONSE_WRAPPING_POLICY_NAME, ROOT_POLICY_NAME } from './policy/builtin.js';

/** Storage keys (behind the barrier). */
const KEYS = {
  // One entry per ACL policy: { name, raw } (the raw text is what reads return).
  policy: (name: string) => `sys/policy/${name}`,
  prefix: 'sys/policy/',
} as const;

const NAME = /^[a-z0-9][a-z0-9._@+-]{0,127}$/;

/** Lower-cased and trimmed, as Vault names policies. */
export function normalizePolicyName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (!NAME.test(name)) throw new BadRequestError(`invalid policy name "${raw}": use letters, digits, ".", "_", "-", "@" and "+"`);
  return name;
}

export class PolicyStore {
  private readonly cache = new Map<string, Policy>();
  private readonly acls = new Map<string, ACL>();
  /**
   * The ACL of a policy list without identity, by the list itself: a cached token entry keeps its
   * list, so its requests find their ACL without building the sorted key. Valid for one generation.
   */
  private aclsByList = new WeakMap<readonly string[], { readonly generation: number; readonly acl: ACL }>();
  private responseWrapping: Policy | undefined;
  /** Bumped by every invalidation: a load that started before it must not cache what it read. */
  private generation = 0;

  constructor(private readonly storage: Storage) {}

  /** Writes the default policy if it is missing (a changed default is kept). */
  async ensureDefault(): Promise<void> {
    if (!(await this.storage.get(KEYS.policy('default')))) await this.write('default', DEFAULT_POLICY);
  }

  async get(rawName: string): Promise<Policy | undefined> {
    const name = rawName.trim().toLowerCase();
    // A reserved name never comes from storage, so an entry written before names were reserved
    // cannot redefine it.
    if (name === RESPONSE_WRAPPING_POLICY_NAME) return (this.responseWrapping ??= parsePolicy(name, RESPONSE_WRAPPING_POLICY));
    if (RESERVED_POLICY_NAMES.has(name)) return undefined;
    const cached = this.cache.get(name);
    if (cached) return cached;
    if (!NAME.test(name)) return undefined;
    const generation = this.generation;
    const raw = await this.storage.get(KEYS.policy(name));
    if (!raw) return undefined;
    const stored = JSON.parse(Buffer.from(raw).toString('utf8')) as { name: string; raw: string };
    const policy = parsePolicy(name, stored.raw);
    if (generation === this.generation) this.cache.set(name, policy);
    return policy;
  }

  async exists(name: string): Promise<boolean> {
    return name === ROOT_POLICY_NAME || (await this.get(name)) !== undefined;
  }

  /** Names of the stored policies; reserved names are never listed, as in Vault. */
  async list(): Promise<string[]> {
    return (await this.storage.list(KEYS.prefix)).filter((k) => !k.endsWith('/') && !RESERVED_POLICY_NAMES.has(k)).sort();
  }

  /** Parses (400 on any error) and stores a policy. */
  async set(rawName: string, text: string): Promise<{ name: string; renamed: boolean }> {
    const name = normalizePolicyName(rawName);
    if (RESERVED_POLICY_NAMES.has(name)) throw new BadRequestError(`cannot update "${name}" policy`);
    await this.write(name, text);
    return { name, renamed: name !== rawName };
  }

  async delete(rawName: string): Promise<void> {
    const name = rawName.trim().toLowerCase();
    if (RESERVED_POLICY_NAMES.has(name)) throw new BadRequestError(`cannot delete "${name}" policy`);
    if (name === 'default') throw new BadRequestError('cannot delete default policy');
    await this.storage.delete(KEYS.policy(name));
    this.invalidate(name);
  }

  private async write(name: string, text: string): Promise<void> {
    const policy = parsePolicy(name, text);
    await this.storage.put(KEYS.policy(name), Buffer.from(JSON.stringify({ name, raw: text })));
    this.invalidate(name);
    this.cache.set(name, policy);
  }

  private invalidate(name: string): void {
    this.generation++;
    this.cache.delete(name);
    this.acls.clear();
  }

  /** Another node changed the stored entry at `key` (HA): forget what was cached from it. */
  remoteChanged(key: string): void {
    if (key.startsWith(KEYS.prefix)) this.invalidate(key.slice(KEYS.prefix.length));
  }

  /** The ACL of a set of policies (missing policies contribute nothing). */
  async acl(names: readonly string[], identity?: IdentityContext & { readonly key?: string }): Promise<ACL> {
    if (names.includes('root')) return ACL.root();
    const key = `${[...names].sort().join(',')}|${identity?.key ?? identity?.entityId ?? ''}`;
    const cached = this.acls.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const policies: Policy[] = [];
    for (const name of names) {
      const policy = await this.get(name);
      if (policy) policies.push(policy);
    }
    const acl = new ACL(policies, identity);
    if (this.acls.size > 1000) this.acls.clear();
    if (generation === this.generation) {
      this.acls.set(key, acl);
      if (!identity) this.aclsByList.set(names, { generation, acl });
    }
    return acl;
  }

  /** The ACL `acl(names)` would answer, when it is at hand without reading storage (root, or built before). */
  cachedAcl(names: readonly string[]): ACL | undefined {
    if (names.includes('root')) return ACL.root();
    const found = this.aclsByList.get(names);
    return found && found.generation === this.generation ? found.acl : undefined;
  }

  /** Drops every cache (seal). */
  reset(): void {
    this.generation++;
    this.cache.clear();
    this.acls.clear();
    this.aclsByList = new WeakMap();
  }
}
