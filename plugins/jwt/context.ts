/** What every path and hook of one JWT/OIDC auth mount shares. */
import type { Clock, Logger, Storage, SystemView } from '../../sdk/index.js';
import { readConfig } from './config.js';
import { TokenKeys } from './keys.js';
import type { PendingLogins } from './pending-logins.js';

/** The stored configuration and the keys built from it, read once and dropped when it changes. */
export class ConfiguredKeys {
  private current: Promise<TokenKeys | undefined> | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
  ) {}

  /** The keys of the stored configuration; undefined while the mount is not configured. */
  get(): Promise<TokenKeys | undefined> {
    if (!this.current) {
      const loading = readConfig(this.storage).then((config) => (config ? new TokenKeys(config, { clock: this.clock, timeoutMs: this.timeoutMs }) : undefined));
      // A failed read is not kept: the next request reads again.
      loading.catch(() => {
        if (this.current === loading) this.current = undefined;
      });
      this.current = loading;
    }
    return this.current;
  }

  /** The configuration changed (written here, or on another node): forget what was built from it. */
  reset(): void {
    this.current = undefined;
  }
}

export interface JwtAuthContext {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly system: SystemView;
  readonly keys: ConfiguredKeys;
  /** OIDC logins between their authorization URL and their callback. */
  readonly pending: PendingLogins;
  /** Timeout of one request to the identity provider, ms. */
  readonly timeoutMs: number;
}
