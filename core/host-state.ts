/**
 * What an unsealed host holds beyond the barrier: the mount table with its built-in mounts (sys,
 * identity, token), the audit devices, the default policy and the cluster's identity. Loaded on
 * unseal (or, on an HA standby, read without writing), dropped on seal, re-read when another node
 * changes it.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Barrier } from '../storage/barrier.js';
import type { AuditBroker } from './audit/broker.js';
import type { IdentityStore } from './auth/identity/identity-store.js';
import { createIdentityBackend } from './auth/identity/backend.js';
import { identityPolicies } from './auth/identity/resolve.js';
import { OidcStore } from './auth/identity/oidc/oidc-store.js';
import type { PolicyStore } from './auth/policy-store.js';
import type { SecretLeases } from './leases/secret-leases.js';
import type { TokenStore } from './auth/token-store.js';
import { createTokenBackend } from './auth/token/backend.js';
import { renewToken } from './auth/token/renew-token.js';
import { createCubbyholeBackend, destroyCubbyhole } from './cubbyhole/backend.js';
import type { Storage } from '../storage/storage.js';
import type { Clock } from './clock.js';
import type { DependencyContainer } from './di/container.js';
import type { PluginConfig } from './plugins/plugin.js';
import { NotActiveError, SealedError } from './errors.js';
import { MountTable } from './mounts/mount-table.js';
import type { PluginRegistry } from './plugins/registry.js';
import type { PluginCatalog } from './plugins/catalog.js';
import type { IsolationLimits } from './plugins/isolation/isolated-backend.js';
import type { ClusterInfo, Unsealed } from './unsealed.js';

/** Storage key of the cluster's name and id, created on first unseal; shown by seal-status and health. */
export const CLUSTER_INFO_KEY = 'core/cluster/info';

export interface HostStateDeps {
  /** The plugin services (core/plugins/services.ts). */
  readonly container: DependencyContainer;
  /** A plugin's block of the configuration file, by plugin name. */
  readonly pluginConfig: (name: string) => PluginConfig;
  readonly barrier: Barrier;
  readonly registry: PluginRegistry;
  readonly catalog: PluginCatalog;
  readonly isolation?: IsolationLimits;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly defaults: { readonly defaultLeaseTtl: number; readonly maxLeaseTtl: number };
  readonly tokens: TokenStore;
  /** The leases of secrets: a mount's are revoked before it is disabled or moved. */
  readonly leases: Pick<SecretLeases, 'revokePrefix'>;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  readonly audit: AuditBroker;
  /** The configuration's api_addr: identity tokens' issuer when identity/oidc/config names none. */
  readonly apiAddr?: string;
  /** The name a new cluster gets (Vault's cluster_name); a cluster keeps the name it was given first. */
  readonly clusterName?: string;
}

export class HostState implements Unsealed {
  private table: MountTable | undefined;
  private clusterInfo: ClusterInfo | undefined;
  private loading: Promise<void> | undefined;

  constructor(private readonly deps: HostStateDeps) {
    // A token's cubbyhole goes with the token, however it ends (revoked, expired, or with its parent).
    deps.tokens.onRevoked(async (hash) => {
      if (this.loaded) await destroyCubbyhole(this.cubbyholeStorage, hash);
    });
  }

  get loaded(): boolean {
    return this.table !== undefined;
  }

  get mounts(): MountTable {
    return this.table ?? notLoaded();
  }

  get cubbyholeStorage(): Storage {
    return this.mounts.live('secret', 'cubbyhole/').storage;
  }

  get cluster(): ClusterInfo {
    return this.clusterInfo ?? notLoaded();
  }

  /** Loads once; concurrent callers share the load in progress. */
  load(): Promise<void> {
    return (this.loading ??= this.loadNow().finally(() => (this.loading = undefined)));
  }

  /**
   * On a standby: loads what is there without writing. On a fresh cluster there may be nothing yet
   * (the first active node writes the built-in mounts); the standby then forwards everything.
   */
  async loadReadOnly(): Promise<void> {
    try {
      await this.load();
    } catch (err) {
      if (!(err instanceof NotActiveError)) throw err;
      this.deps.logger.info('standby: the cluster is not set up yet; forwarding every request to the active node until it is');
    }
  }

  /** Drops everything loaded (before sealing). */
  async unload(): Promise<void> {
    const { audit, tokens, policies } = this.deps;
    const table = this.table;
    this.table = undefined;
    this.clusterInfo = undefined;
    await table?.unload();
    await audit.close();
    tokens.reset();
    policies.reset();
  }

  /** Reads the cluster identity again (another node created it). */
  async reloadCluster(): Promise<void> {
    this.clusterInfo = await this.readClusterInfo();
  }

  /** Reads again what loading reads (mount tables, audit devices, cluster info), when loaded. */
  async reread(): Promise<void> {
    if (!this.table) return;
    await this.table.sync();
    await this.deps.audit.load();
    await this.reloadCluster();
  }

  /** Changes may have been missed: drops every cache and rebuilds every backend. */
  async resync(): Promise<void> {
    const table = this.table;
    if (!table) return;
    const { barrier, audit, tokens, policies, logger } = this.deps;
    tokens.reset();
    policies.reset();
    await barrier.adoptStoredKeyring();
    await table.sync();
    await table.reload(table.allMounts());
    await audit.load();
    logger.info('HA: caches rebuilt after the change feed reconnected');
  }

  private async loadNow(): Promise<void> {
    if (this.table) return;
    const { container, pluginConfig, barrier, registry, catalog, isolation, logger, clock, defaults, tokens, policies, identity, audit } = this.deps;
    const table = new MountTable({
      root: container,
      pluginConfig,
      storage: barrier,
      registry,
      catalog,
      ...(isolation ? { isolation } : {}),
      logger,
      clock,
      defaults,
      // As in Vault, the mount's secrets are revoked through it while it still serves, and a lease
      // it fails to revoke keeps the mount in place.
      beforeLeaving: async (entry, prefix) => {
        if (entry.table !== 'secret') return;
        const revoked = await this.deps.leases.revokePrefix(prefix);
        if (revoked > 0) logger.info({ mount: prefix, revoked }, 'leases of a mount that is leaving its path revoked');
      },
      onDisable: async (entry, prefix) => {
        const revoked = await tokens.revokeByMount(prefix, entry.accessor);
        if (revoked > 0) logger.info({ mount: prefix, revoked }, 'tokens of a disabled auth method revoked');
      },
      // Tokens minted through a moved auth method keep working (renewal finds it by accessor); their
      // path follows it, so lookups show where they came from and disabling it later revokes them.
      // Its entity aliases keep their entities (by accessor) and show the new path.
      onRemount: async (entry, from, to) => {
        if (entry.table !== 'auth') return;
        const moved = await tokens.movePathPrefix(from, to);
        if (moved > 0) logger.info({ from, to, moved }, 'tokens of a moved auth method follow it');
        await identity.moveAliases(entry.accessor, to);
      },
    });
    // Load first: ensureBuiltin persists the table, which must already hold the stored entries.
    await table.load();
    await table.ensureBuiltin('secret', 'sys/', 'system', 'system endpoints used for control, policy and debugging');
    await table.ensureBuiltin(
      'secret',
      'identity/',
      'identity',
      'identity store',
      createIdentityBackend({
        store: identity,
        identity,
        mounts: (accessor) => {
          const live = table.byAccessor(accessor);
          return live?.entry.table === 'auth' ? { accessor, type: live.entry.type, path: live.routePrefix } : undefined;
        },
        oidc: new OidcStore(barrier, clock),
        apiAddr: () => this.deps.apiAddr ?? '',
      }),
    );
    await table.ensureBuiltin('secret', 'cubbyhole/', 'cubbyhole', 'per-token private secret storage', createCubbyholeBackend(tokens));
    await table.ensureBuiltin(
      'auth',
      'token/',
      'token',
      'token based credentials',
      createTokenBackend({
        store: tokens,
        storage: barrier,
        mountTtls: () => {
          const view = table.systemViewFor(table.live('auth', 'token/'));
          return { defaultTtl: view.defaultLeaseTtl(), maxTtl: view.maxLeaseTtl() };
        },
        policyExists: (name) => policies.exists(name),
        identityPolicies: async (entityId) => (entityId ? (await identityPolicies(identity, entityId)).policies : []),
        entityForAlias: async (name, mount) =>
          (await identity.resolveAlias({ mountAccessor: mount.accessor, mountType: mount.type, mountPath: mount.path, name })).entityId,
        renew: (token, increment, req) => renewToken(tokens, this.mounts, token, increment, req),
      }),
    );
    await policies.ensureDefault();
    await audit.load();
    this.clusterInfo = await this.readClusterInfo();
    this.table = table;
    logger.info({ mounts: table.entries('secret').length + table.entries('auth').length }, 'unsealed');
  }

  private async readClusterInfo(): Promise<ClusterInfo> {
    const { barrier } = this.deps;
    const raw = await barrier.get(CLUSTER_INFO_KEY);
    if (raw) return JSON.parse(Buffer.from(raw).toString('utf8')) as ClusterInfo;
    const id = randomUUID();
    const info: ClusterInfo = { name: this.deps.clusterName ?? `keywarden-cluster-${id.slice(0, 8)}`, id };
    await barrier.put(CLUSTER_INFO_KEY, Buffer.from(JSON.stringify(info)));
    return info;
  }
}

function notLoaded(): never {
  throw new SealedError();
}
