/**
 * Rate-limit quotas (docs/quotas.md): the rules and sys/quotas/config, kept behind the barrier and
 * held in memory, and the one rule that applies to a request, most specific first as Vault picks it
 * (https://developer.hashicorp.com/vault/api-docs/system/quotas-rate-limit): a path under a mount,
 * then the longest `prefix*` under it, then the mount, then the global rule. Each rule counts per
 * client address (client-buckets.ts), on this node only: with HA every node enforces its own share.
 */
import type { Storage } from '../../storage/storage.js';
import { ClientBuckets } from './client-buckets.js';

/** Vault's default `rate_limit_exempt_paths`: what an operator needs to get a sealed or locked-out server back. */
export const DEFAULT_EXEMPT_PATHS: readonly string[] = Object.freeze([
  'sys/generate-recovery-token/attempt',
  'sys/generate-recovery-token/update',
  'sys/generate-root/attempt',
  'sys/generate-root/update',
  'sys/health',
  'sys/seal-status',
  'sys/unseal',
]);

export interface QuotaConfig {
  readonly rateLimitExemptPaths: readonly string[];
  readonly enableRateLimitAuditLogging: boolean;
  readonly enableRateLimitResponseHeaders: boolean;
}

/** A rule as stored. `mount` is '' for the global rule; `suffix` a path under the mount, `*` ending a prefix. */
export interface RateLimitRule {
  readonly name: string;
  readonly mount: string;
  readonly suffix: string;
  readonly rate: number;
  /** Seconds. */
  readonly interval: number;
  readonly blockInterval: number;
  readonly inheritable: boolean;
}

export const QUOTA_KEYS = {
  config: 'sys/quotas/config',
  rulePrefix: 'sys/quotas/rate-limit/',
  rule: (name: string) => `sys/quotas/rate-limit/${name}`,
} as const;

const DEFAULT_CONFIG: QuotaConfig = Object.freeze({ rateLimitExemptPaths: DEFAULT_EXEMPT_PATHS, enableRateLimitAuditLogging: false, enableRateLimitResponseHeaders: false });

/** A rule with its counters. */
export interface LiveRule {
  readonly rule: RateLimitRule;
  readonly buckets: ClientBuckets;
}

/** The rules of one mount, by how they match. */
interface MountRules {
  whole?: LiveRule;
  readonly exact: Map<string, LiveRule>;
  /** `prefix*` rules, longest prefix first. */
  globs: { readonly prefix: string; readonly live: LiveRule }[];
}

/** Everything loaded, as one value replaced whole on a change. */
interface Loaded {
  readonly config: QuotaConfig;
  readonly exempt: ReadonlySet<string>;
  readonly exemptPrefixes: readonly string[];
  readonly rules: ReadonlyMap<string, LiveRule>;
  readonly byMount: ReadonlyMap<string, MountRules>;
  readonly global: LiveRule | undefined;
}

export class Quotas {
  private loaded: Loaded | undefined;
  private loading: Promise<Loaded> | undefined;
  /** Bumped on every change, so a load that raced one is not kept. */
  private generation = 0;

  constructor(private readonly storage: Storage) {}

  /** Forgets everything loaded (on seal, or another node changed the rules). */
  reset(): void {
    this.generation++;
    this.loaded = undefined;
    this.loading = undefined;
  }

  /** Another node changed `key` (HA): read the rules again when next needed. Counters start again. */
  remoteChanged(key: string): void {
    if (key.startsWith('sys/quotas/')) this.reset();
  }

  /** What is loaded, at once when it is; a promise the first time after an unseal or a change. */
  current(): Loaded | Promise<Loaded> {
    if (this.loaded) return this.loaded;
    return (this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    }));
  }

  async config(): Promise<QuotaConfig> {
    return (await this.current()).config;
  }

  async setConfig(config: QuotaConfig): Promise<void> {
    await this.storage.put(QUOTA_KEYS.config, encode(config));
    this.reset();
  }

  async rule(name: string): Promise<RateLimitRule | undefined> {
    return (await this.current()).rules.get(name)?.rule;
  }

  async names(): Promise<string[]> {
    return [...(await this.current()).rules.keys()].sort();
  }

  /** The rule already covering the same mount and path under another name, if any (Vault refuses a second). */
  async sameScope(rule: RateLimitRule): Promise<string | undefined> {
    for (const { rule: other } of (await this.current()).rules.values()) {
      if (other.name !== rule.name && other.mount === rule.mount && other.suffix === rule.suffix) return other.name;
    }
    return undefined;
  }

  /** Stores a rule; its counters start again. */
  async setRule(rule: RateLimitRule): Promise<void> {
    await this.storage.put(QUOTA_KEYS.rule(rule.name), encode(rule));
    this.reset();
  }

  async deleteRule(name: string): Promise<void> {
    await this.storage.delete(QUOTA_KEYS.rule(name));
    this.reset();
  }

  /** The live rule for a request to `path` under the mount `mount` ('sys/' for sys paths), or undefined. */
  static applying(loaded: Loaded, path: string, mount: string | undefined): LiveRule | undefined {
    if (mount !== undefined) {
      const rules = loaded.byMount.get(mount);
      if (rules) {
        const suffix = path.slice(mount.length).replace(/\/$/, '');
        const exact = rules.exact.get(suffix);
        if (exact) return exact;
        for (const glob of rules.globs) if (suffix.startsWith(glob.prefix)) return glob.live;
        if (rules.whole) return rules.whole;
      }
    }
    return loaded.global;
  }

  /**
   * Whether any rule could apply to `path`: there is a global rule, or a rule on a mount the path
   * is under. Checked before the mount is resolved, so that a rule on another mount costs a
   * request a few string comparisons.
   */
  static mayApply(loaded: Loaded, path: string): boolean {
    if (loaded.global) return true;
    for (const mount of loaded.byMount.keys()) if (path.startsWith(mount) || `${path}/` === mount) return true;
    return false;
  }

  /** Whether `path` is exempt from every rate-limit rule. */
  static exempt(loaded: Loaded, path: string): boolean {
    if (loaded.exempt.has(path)) return true;
    for (const prefix of loaded.exemptPrefixes) if (path.startsWith(prefix)) return true;
    return false;
  }

  private async load(): Promise<Loaded> {
    const generation = this.generation;
    const raw = await this.storage.get(QUOTA_KEYS.config);
    const config = raw ? { ...DEFAULT_CONFIG, ...decode<Partial<QuotaConfig>>(raw) } : DEFAULT_CONFIG;
    const rules = new Map<string, LiveRule>();
    for (const name of await this.storage.list(QUOTA_KEYS.rulePrefix)) {
      const stored = await this.storage.get(QUOTA_KEYS.rule(name));
      if (!stored) continue;
      const rule = decode<RateLimitRule>(stored);
      rules.set(rule.name, { rule, buckets: new ClientBuckets(Math.max(1, Math.round(rule.rate)), rule.interval * 1000, rule.blockInterval * 1000) });
    }
    const byMount = new Map<string, MountRules>();
    let global: LiveRule | undefined;
    for (const live of rules.values()) {
      const { mount, suffix } = live.rule;
      if (mount === '') {
        global = live;
        continue;
      }
      let entry = byMount.get(mount);
      if (!entry) byMount.set(mount, (entry = { exact: new Map(), globs: [] }));
      if (suffix === '') entry.whole = live;
      else if (suffix.endsWith('*')) entry.globs.push({ prefix: suffix.slice(0, -1), live });
      else entry.exact.set(suffix, live);
    }
    for (const entry of byMount.values()) entry.globs.sort((a, b) => b.prefix.length - a.prefix.length);
    const exemptPrefixes = config.rateLimitExemptPaths.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
    const loaded: Loaded = { config, exempt: new Set(config.rateLimitExemptPaths), exemptPrefixes, rules, byMount, global };
    if (generation === this.generation) this.loaded = loaded;
    else this.loading = undefined;
    return loaded;
  }
}

export type LoadedQuotas = Loaded;

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function decode<T>(raw: Uint8Array): T {
  return JSON.parse(Buffer.from(raw).toString('utf8')) as T;
}
