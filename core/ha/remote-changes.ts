/**
 * Applies another node's changes to what this node holds: the shared store reports the keys it
 * changed, and each cache built from them (keyring, mount tables, audit devices, cluster identity,
 * policies, tokens, a mount's own caches) is dropped or read again. `settled` lets a standby wait
 * until every change reported so far has been applied before it answers from its caches.
 */
import type { Logger } from 'pino';
import type { Barrier } from '../../storage/barrier.js';
import type { AuditBroker } from '../audit/broker.js';
import { AUDIT_TABLE_KEY } from '../audit/broker.js';
import { AUDITED_HEADERS_KEY } from '../audit/request-headers.js';
import { CORS_CONFIG_KEY, type CorsSettings } from '../http/cors.js';
import type { PolicyStore } from '../auth/policy-store.js';
import type { TokenStore } from '../auth/token-store.js';
import type { Quotas } from '../quotas/quotas.js';
import { CLUSTER_INFO_KEY, type HostState } from '../host-state.js';
import { MOUNT_TABLE_KEYS } from '../mounts/mount-table.js';
import type { HaManager } from './ha-manager.js';
import { errorMessage } from '../errors.js';

/** Storage keys of the two mount tables. */
const MOUNT_TABLES: ReadonlySet<string> = new Set(Object.values(MOUNT_TABLE_KEYS));

export interface RemoteChangeDeps {
  readonly barrier: Barrier;
  readonly state: HostState;
  readonly audit: AuditBroker;
  readonly policies: PolicyStore;
  readonly tokens: TokenStore;
  /** Rate-limit quota rules: read again after another node changes them. */
  readonly quotas?: Pick<Quotas, 'remoteChanged' | 'reset'>;
  /** The CORS setting: forgotten after another node changes it, and read again at the next request. */
  readonly cors?: Pick<CorsSettings, 'reset'>;
  readonly ha: HaManager;
  readonly logger: Logger;
}

export class RemoteChanges {
  /** Invalidations still being applied (a keyring re-read, a mount table re-read). */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly deps: RemoteChangeDeps) {}

  /** Resolves when every change reported so far has been applied. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Another node changed `keys` in the shared store (or the feed reconnected and changes may be lost). */
  apply(change: { keys: readonly string[] } | { resync: true }): void {
    const { barrier, state, audit, policies, tokens, ha } = this.deps;
    if (barrier.sealed) return;
    if (!state.loaded) {
      // Not loaded yet (a fresh cluster): perhaps it can be now. A load already running may have
      // read the tables before this change, so whatever it loaded is read again afterwards.
      if (ha.state === 'standby') this.track(state.loadReadOnly().then(() => state.reread()));
      return;
    }
    if ('resync' in change) {
      this.deps.quotas?.reset();
      this.deps.cors?.reset();
      this.track(state.resync());
      return;
    }
    const table = state.mounts;
    let mounts = false;
    for (const key of change.keys) {
      if (key === 'core/keyring') this.track(barrier.reloadKeyring());
      else if (MOUNT_TABLES.has(key)) mounts = true;
      else if (key === AUDIT_TABLE_KEY) this.track(audit.load());
      else if (key === AUDITED_HEADERS_KEY) this.track(audit.headers.load());
      else if (key === CORS_CONFIG_KEY) this.deps.cors?.reset();
      else if (key === CLUSTER_INFO_KEY) this.track(state.reloadCluster());
      else if (key.startsWith('sys/policy/')) policies.remoteChanged(key);
      else if (key.startsWith('sys/token/')) tokens.remoteChanged(key);
      else if (key.startsWith('sys/quotas/')) this.deps.quotas?.remoteChanged(key);
      else {
        const inMount = /^(?:logical|auth)\/([^/]+)\/(.*)$/.exec(key);
        if (inMount) table.byUuid(inMount[1]!)?.backend?.invalidate?.(inMount[2]!);
      }
    }
    if (mounts) this.track(table.sync());
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((err: unknown) => {
      this.deps.logger.warn({ err: errorMessage(err) }, 'HA: applying a change from another node failed');
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}
