/** What every path and hook of one cloud auth mount shares. */
import type { Logger, Clock, KeyedLock, SystemView, Storage } from '../../sdk/index.js';
import type { CloudProvider } from './provider/types.js';

/** Full ARNs looked up for wildcard bindings, by unique ID: a principal's ARN changes only if it is recreated. */
export class ArnCache {
  /** Unused entries are dropped after this long; a hit renews the entry. */
  static readonly LIFETIME_MS = 7 * 24 * 3600 * 1000;
  private readonly entries = new Map<string, { arn: string; expires: number }>();

  constructor(private readonly clock: Clock) {}

  get(uniqueId: string): string | undefined {
    const entry = this.entries.get(uniqueId);
    const now = this.clock.now().getTime();
    if (!entry || entry.expires <= now) return undefined;
    entry.expires = now + ArnCache.LIFETIME_MS;
    return entry.arn;
  }

  set(uniqueId: string, arn: string): void {
    if (uniqueId) this.entries.set(uniqueId, { arn, expires: this.clock.now().getTime() + ArnCache.LIFETIME_MS });
  }

  sweep(): void {
    const now = this.clock.now().getTime();
    for (const [id, entry] of this.entries) if (entry.expires <= now) this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}

export interface CloudAuthContext {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly system: SystemView;
  readonly provider: CloudProvider;
  readonly arnCache: ArnCache;
  /** Timeout of one call to the provider (and of each attempt of a forwarded login), ms. */
  readonly timeoutMs: number;
  /** Whether SHA-1 PKCS#7 signatures (the DSA `pkcs7` document) verify: the server config's `cloud_auth.allow_sha1_signatures`. */
  readonly allowSha1Signatures: boolean;
  /** Per-instance locks around every read-check-write of an access-list entry. */
  readonly accessListLocks: KeyedLock;
}
