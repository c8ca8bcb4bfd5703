/** What the sys backend reaches into: host services, not a storage view like other backends. */
import type { SealManager } from '../seal/seal-manager.js';
import type { Barrier } from '../../storage/barrier.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { PluginCatalog } from '../plugins/catalog.js';
import type { Clock } from '../clock.js';
import type { TokenEntry, TokenStore } from '../auth/token-store.js';
import type { PolicyStore } from '../auth/policy-store.js';
import type { ACL } from '../auth/policy/acl.js';
import type { AuditBroker } from '../audit/broker.js';
import type { HaManager } from '../ha/ha-manager.js';
import type { ResponseWrapper } from '../wrapping/wrapper.js';
import type { Snapshots } from '../snapshot/snapshots.js';
import type { Metrics } from '../metrics/metrics.js';
import type { InFlightRequests } from '../pipeline/in-flight.js';
import type { LogLevels } from '../log-levels.js';
import type { LogTap } from '../log-tap.js';
import type { Unsealed } from '../unsealed.js';
import type { UserLockout } from '../auth/lockout/user-lockout.js';
import type { Quotas } from '../quotas/quotas.js';
import type { IdentityStore } from '../auth/identity/identity-store.js';
import type { CorsSettings } from '../http/cors.js';
import type { SecretLeases } from '../leases/secret-leases.js';
import type { WholeServer } from './whole-server.js';

/** Tokens and policies, for the sys paths that report or change them. */
export interface AuthzDeps {
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  aclFor(token: Pick<TokenEntry, 'policies' | 'entityId'>): Promise<ACL>;
}

export interface SystemDeps {
  readonly seal: SealManager;
  readonly barrier: Barrier;
  /** The mount table and the cluster's identity; the sys paths that use them are not served while sealed. */
  readonly unsealed: Unsealed;
  readonly registry: PluginRegistry;
  /** Built-in and registered external plugins (sys/plugins/catalog). */
  readonly catalog: PluginCatalog;
  readonly clock: Clock;
  readonly authz: AuthzDeps;
  /** The leases of secrets (sys/leases/*; the tokens' leases are the token store's). */
  readonly leases: SecretLeases;
  /** The OpenAPI document of everything mounted; only unauthenticated paths for anonymous callers. */
  openapi(authenticated: boolean): Promise<Record<string, unknown>>;
  readonly audit: AuditBroker;
  /** `sys/seal-status` `storage_type`. */
  readonly storageType: string;
  readonly version: string;
  /** The configuration's api_addr (sys/ha-status of a node without HA storage). */
  readonly apiAddr?: string;
  /** HA over a shared store; undefined on a single node. */
  readonly ha?: HaManager;
  /**
   * For operations only the active node may run (step-down): on a standby, throws the error that
   * makes the host forward the request.
   */
  requireActive(): void;
  /** Response wrapping (sys/wrapping/*). */
  readonly wrapping: ResponseWrapper;
  /** System TTL defaults in seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
  /** Whether Vault's unauthenticated `sys/generate-root/*` is served (the config can turn it off). */
  readonly unauthedGenerateRoot: boolean;
  /** Snapshots of the whole store (sys/storage/snapshot). */
  readonly snapshots: Snapshots;
  /** sys/metrics. */
  readonly metrics: Metrics;
  /** sys/in-flight-req. */
  readonly inFlight: InFlightRequests;
  /** A worker of several: sys/in-flight-req lists every worker's requests. */
  readonly wholeServer?: WholeServer;
  /** sys/config/state/sanitized: the configuration without secrets. */
  configState(): Record<string, unknown>;
  /** sys/loggers. */
  readonly logLevels: LogLevels;
  /** sys/monitor: the log's lines as they are written; none when the embedding program brought its own logger. */
  readonly logTap?: LogTap;
  /** sys/host-info: the directories whose disks are reported (the data directory, the working directory). */
  readonly diskPaths: readonly string[];
  /** User lockout of logins (sys/locked-users). */
  readonly lockout: UserLockout;
  /** Rate-limit quotas (sys/quotas/*). */
  readonly quotas: Quotas;
  /** Entities (sys/internal/counters/entities). */
  readonly identity: Pick<IdentityStore, 'listEntities'>;
  /** sys/config/cors. */
  readonly cors: CorsSettings;
}
