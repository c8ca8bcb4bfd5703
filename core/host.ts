/**
 * The host: owns storage, the barrier, the seal, the mount tables and the token store, and takes
 * every logical request through the pipeline of DESIGN.md §3 — operation, sealed check, routing,
 * token, path match and existence check, authorization, handler, response shaping.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Barrier } from '../storage/barrier.js';
import type { PhysicalStorage, SharedStorage } from '../storage/storage.js';
import { isShared } from '../storage/storage.js';
import type { HaManager } from './ha/ha-manager.js';
import { checkForwarded, ForwardNonces, type ForwardSigner } from './ha/forward.js';
import { AUDIT_TABLE_KEY } from './audit/broker.js';
import { MOUNT_TABLE_KEYS } from './mounts/mount-table.js';
import { TOKENS } from './di/tokens.js';
import { createRootContainer, registerValue, type DependencyContainer } from './di/container.js';
import {
  BadRequestError,
  NotActiveError,
  NotFoundError,
  PermissionDeniedError,
  SealedError,
  UnsupportedMediaTypeError,
  UnsupportedOperationError,
  httpStatusOf,
  publicMessageOf,
} from './errors.js';
import type { Backend } from './framework/backend.js';
import { parseBool, CoercionError } from './framework/fields.js';
import type { LogicalRequest, LogicalResponse, Operation, RequestAuth } from './framework/request.js';
import { MountTable, type LiveMount } from './mounts/mount-table.js';
import { PluginRegistry } from './plugins/registry.js';
import { SealManager } from './seal/seal-manager.js';
import { TokenStore, type ResolvedToken, type TokenEntry } from './auth/token-store.js';
import { PolicyStore } from './auth/policy-store.js';
import type { ACL, IdentityContext } from './auth/policy/acl.js';
import { IdentityStore } from './auth/identity/identity-store.js';
import { createIdentityBackend } from './auth/identity/backend.js';
import { createTokenBackend } from './auth/token/backend.js';
import { authBlock, issueToken } from './auth/token/issue.js';
import { renewTokenTtl } from './auth/ttl.js';
import { AuditBroker } from './audit/broker.js';
import type { AuditInput } from './audit/entry.js';
import { createSystemBackend } from './system/backend.js';
import { openApiDocument, type MountedPaths } from './system/openapi.js';
import type { AuthzServices, ClusterInfo, SystemServices } from './system/services.js';
import { systemClock, type Clock } from './clock.js';
import { StorageView } from '../storage/view.js';
import { cidrAllows } from './auth/cidr.js';
import type { AuthResult } from './framework/request.js';

export { VERSION } from './version.js';
import { VERSION } from './version.js';

/** A request as the HTTP layer hands it over. */
export interface HostRequest {
  readonly method: string;
  /** The path after `/v1/`, without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Parsed body (JSON or form), or undefined for none. */
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly remoteAddress: string;
  /**
   * The body's bytes as received, kept only for a request with a forwarding MAC (which covers
   * them); undefined for every other request.
   */
  readonly rawBody?: Buffer;
}

export interface HostResponse {
  readonly status: number;
  /** JSON-serializable; undefined means no body. */
  readonly body?: unknown;
}

export interface HostOptions {
  readonly physical: PhysicalStorage;
  readonly registry: PluginRegistry;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** System TTL defaults in seconds (768h each unless configured). */
  readonly defaultLeaseTtl?: number;
  readonly maxLeaseTtl?: number;
  /** How often backends' periodic hooks run, in ms; 0 disables the timer. */
  readonly periodicIntervalMs?: number;
  /** The loaded WASM crypto core, registered for plugins under TOKENS.WasmCrypto. */
  readonly wasm?: unknown;
  /** HA over a shared store (`physical` must then be a SharedStorage). */
  readonly ha?: HaManager;
}

/**
 * Set while a standby runs a request itself: a write attempt marks it, and the host then forwards
 * the request to the active node instead (even if a handler caught the refusal and answered).
 */
const standbyAttempt = new AsyncLocalStorage<{ wrote: boolean }>();

/** Storage keys of the two mount tables. */
const MOUNT_TABLES: ReadonlySet<string> = new Set(Object.values(MOUNT_TABLE_KEYS));

const DEFAULT_TTL = 768 * 3600;

/** Storage keys under the barrier owned by the host. */
const KEYS = {
  // Cluster name and id, created on first unseal; shown by seal-status and health.
  cluster: 'core/cluster/info',
} as const;

/**
 * Routes whose `data` keys are also copied to the top level of the body: a legacy Vault behaviour
 * clients read (hvac's sys.list_mounted_secrets_engines, node-vault's mounts()).
 */
const TOP_LEVEL_DATA_ROUTES = [/^sys\/mounts(\/|$)/, /^sys\/auth(\/|$)/, /^sys\/key-status$/, /^sys\/rotate$/, /^sys\/policy(\/|$)/, /^sys\/capabilities/, /^sys\/audit/];

export class Host {
  readonly barrier: Barrier;
  readonly seal: SealManager;
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  readonly audit: AuditBroker;
  readonly registry: PluginRegistry;
  readonly container: DependencyContainer;
  private mountTable: MountTable | undefined;
  private clusterInfo: ClusterInfo | undefined;
  private readonly system: Backend;
  private readonly authz: AuthzServices;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly defaults: { defaultLeaseTtl: number; maxLeaseTtl: number };
  private periodicTimer: NodeJS.Timeout | undefined;
  private periodicRunning = false;
  readonly ha: HaManager | undefined;
  private readonly shared: SharedStorage | undefined;
  /** Cache invalidations still being applied (a keyring re-read, a mount table re-read). */
  private readonly invalidating = new Set<Promise<unknown>>();
  private forwardingKey: Buffer | undefined;
  private readonly forwardSigner: ForwardSigner = { key: () => this.forwardKey() };
  /** Not cleared on seal: a request accepted before a seal stays refused after the unseal until it ages out. */
  private readonly forwardedNonces = new ForwardNonces();

  constructor(options: HostOptions) {
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.registry = options.registry;
    this.defaults = { defaultLeaseTtl: options.defaultLeaseTtl ?? DEFAULT_TTL, maxLeaseTtl: options.maxLeaseTtl ?? DEFAULT_TTL };
    this.barrier = new Barrier(options.physical);
    this.tokens = new TokenStore(this.barrier, this.clock);
    this.policies = new PolicyStore(this.barrier);
    this.identity = new IdentityStore(this.barrier, this.clock);
    this.audit = new AuditBroker(this.barrier, this.logger, this.clock);
    this.container = createRootContainer();
    registerValue(this.container, TOKENS.PhysicalStorage, options.physical);
    registerValue(this.container, TOKENS.Barrier, this.barrier);
    registerValue(this.container, TOKENS.Storage, this.barrier);
    registerValue(this.container, TOKENS.Clock, this.clock);
    registerValue(this.container, TOKENS.Logger, this.logger);
    registerValue(this.container, TOKENS.PluginRegistry, this.registry);
    if (options.wasm) registerValue(this.container, TOKENS.WasmCrypto, options.wasm);

    const shared = isShared(options.physical) ? options.physical : undefined;
    this.seal = new SealManager(
      options.physical,
      this.barrier,
      {
        afterUnseal: () => this.afterUnseal(),
        beforeSeal: () => this.beforeSeal(),
        createRootToken: () => this.tokens.createRootToken(),
      },
      shared ? (name, work) => shared.exclusive(name, work) : undefined,
    );
    this.authz = { tokens: this.tokens, policies: this.policies, aclFor: (entry) => this.aclFor(entry) };
    const services: SystemServices = {
      seal: this.seal,
      barrier: this.barrier,
      mounts: () => this.mountTable,
      registry: this.registry,
      clock: this.clock,
      cluster: () => this.clusterInfo,
      authz: this.authz,
      audit: this.audit,
      openapi: async (authenticated) => {
        const mounted: MountedPaths[] = [{ prefix: 'sys/', paths: this.system.describePaths() }];
        for (const entry of [...(this.mountTable?.entries('secret') ?? []), ...(this.mountTable?.entries('auth') ?? [])]) {
          const live = this.mountTable!.live(entry.table, entry.path);
          if (live.backend) mounted.push({ prefix: live.routePrefix, paths: live.backend.describePaths() });
        }
        return openApiDocument(mounted, VERSION, (path) => authenticated || path.unauthenticated);
      },
      storageType: options.physical.kind,
      ...(options.ha ? { ha: options.ha } : {}),
      requireActive: () => this.refuseOnStandby(),
      version: VERSION,
      defaultLeaseTtl: this.defaults.defaultLeaseTtl,
      maxLeaseTtl: this.defaults.maxLeaseTtl,
    };
    this.system = createSystemBackend(services);

    if (options.ha) {
      if (!isShared(options.physical)) throw new Error('HA needs a shared physical store');
      const ha = options.ha;
      this.ha = ha;
      this.shared = options.physical;
      this.barrier.setWriteGuard(() => this.refuseOnStandby());
      this.shared.onRemoteChange((change) => this.onRemoteChange(change));
      ha.attach(
        { promote: () => this.promote(), demote: (reason) => this.logger.info({ reason }, 'standby: writes are forwarded to the active node') },
        this.forwardSigner,
      );
    }

    const interval = options.periodicIntervalMs ?? 60_000;
    if (interval > 0) {
      this.periodicTimer = setInterval(() => void this.runPeriodic(), interval);
      this.periodicTimer.unref();
    }
  }

  /** The live mount table; undefined while sealed. */
  get mounts(): MountTable | undefined {
    return this.mountTable;
  }

  /**
   * Runs every backend's periodic hook and the token expiry sweep once (the timer calls this).
   * In an HA cluster only the active node does: periodic work happens once per cluster.
   */
  async runPeriodic(): Promise<void> {
    if (this.periodicRunning || !this.mountTable) return;
    if (this.ha && this.ha.state !== 'active') return;
    this.periodicRunning = true;
    try {
      await this.mountTable.runPeriodic();
      const swept = await this.tokens.sweepExpired();
      if (swept > 0) this.logger.info({ swept }, 'expired tokens removed');
    } catch (err) {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'periodic work failed');
    } finally {
      this.periodicRunning = false;
    }
  }

  private async afterUnseal(): Promise<void> {
    if (!this.ha) return this.loadState();
    // A standby until elected: it loads without writing. On a fresh cluster there may be nothing
    // to load yet (the first active node writes the built-in mounts); it then forwards everything
    // until a change notification or its own election lets it load.
    this.ha.enterStandby();
    await this.loadStateReadOnly();
    this.ha.join();
  }

  private async loadStateReadOnly(): Promise<void> {
    try {
      await this.loadState();
    } catch (err) {
      if (!(err instanceof NotActiveError)) throw err;
      this.logger.info('standby: the cluster is not set up yet; forwarding every request to the active node until it is');
    }
  }

  /** The node won the election: catch up with every change, then load what is missing. */
  private async promote(): Promise<void> {
    await this.shared!.sync();
    await this.settled();
    if (!this.mountTable) await this.loadState();
    await this.tokens.ensureSecrets();
  }

  private loadState(): Promise<void> {
    return this.loading ??= this.loadStateNow().finally(() => (this.loading = undefined));
  }

  private loading: Promise<void> | undefined;

  private async loadStateNow(): Promise<void> {
    if (this.mountTable) return;
    const table = new MountTable({
      root: this.container,
      storage: this.barrier,
      registry: this.registry,
      logger: this.logger,
      clock: this.clock,
      defaults: this.defaults,
      onDisable: async (_entry, prefix) => {
        const revoked = await this.tokens.revokeByPathPrefix(prefix);
        if (revoked > 0) this.logger.info({ mount: prefix, revoked }, 'tokens of a disabled auth method revoked');
      },
    });
    // Load first: ensureBuiltin persists the table, which must already hold the stored entries.
    await table.load();
    await table.ensureBuiltin('secret', 'sys/', 'system', 'system endpoints used for control, policy and debugging');
    await table.ensureBuiltin('secret', 'identity/', 'identity', 'identity store', createIdentityBackend(this.identity));
    await table.ensureBuiltin(
      'auth',
      'token/',
      'token',
      'token based credentials',
      createTokenBackend({
        store: this.tokens,
        storage: this.barrier,
        mountTtls: () => {
          const view = table.systemViewFor(table.live('auth', 'token/'));
          return { defaultTtl: view.defaultLeaseTtl(), maxTtl: view.maxLeaseTtl() };
        },
        policyExists: (name) => this.policies.exists(name),
        renew: (token, increment, req) => this.renewToken(token, increment, req),
      }),
    );
    await this.policies.ensureDefault();
    await this.audit.load();
    this.clusterInfo = await this.loadClusterInfo();
    this.mountTable = table;
    this.logger.info({ mounts: table.entries('secret').length + table.entries('auth').length }, 'unsealed');
  }

  private async beforeSeal(): Promise<void> {
    await this.ha?.leave();
    this.forwardingKey = undefined;
    const table = this.mountTable;
    this.mountTable = undefined;
    this.clusterInfo = undefined;
    await table?.unload();
    await this.audit.close();
    this.tokens.reset();
    this.policies.reset();
    this.logger.info('sealed');
  }

  private async loadClusterInfo(): Promise<ClusterInfo> {
    const raw = await this.barrier.get(KEYS.cluster);
    if (raw) return JSON.parse(Buffer.from(raw).toString('utf8')) as ClusterInfo;
    const id = randomUUID();
    const info: ClusterInfo = { name: `keywarden-cluster-${id.slice(0, 8)}`, id };
    await this.barrier.put(KEYS.cluster, Buffer.from(JSON.stringify(info)));
    return info;
  }

  /** Stops the timer and seals; the physical store is closed by its owner. */
  async shutdown(): Promise<void> {
    if (this.periodicTimer) clearInterval(this.periodicTimer);
    this.periodicTimer = undefined;
    await this.seal.seal();
  }

  /** The ACL of a token: its policies, with identity templating from its entity. */
  private async aclFor(entry: TokenEntry): Promise<ACL> {
    let identity: (IdentityContext & { key: string }) | undefined;
    if (entry.entityId && !entry.policies.includes('root')) {
      const context = await this.identity.context(entry.entityId);
      if (context) {
        identity = {
          key: `${context.entity.id}@${context.aliases.map((a) => a.last_update_time).join(',')}`,
          entityId: context.entity.id,
          entityName: context.entity.name,
          entityMetadata: { ...(context.entity.metadata ?? {}) },
          aliases: Object.fromEntries(
            context.aliases.map((a) => [a.mount_accessor, { id: a.id, name: a.name, metadata: { ...a.metadata } }]),
          ),
        };
      }
    }
    return this.policies.acl(entry.policies, identity);
  }

  /** The whole pipeline; never throws: every failure becomes an error response. */
  async handle(request: HostRequest): Promise<HostResponse> {
    const id = randomUUID();
    try {
      if (this.ha) {
        const forwarded = this.acceptForwarded(request);
        if (forwarded) request = forwarded;
        if (this.ha.state === 'standby' && !this.isNodeLocal(request.path)) return await this.handleOnStandby(id, request, forwarded !== undefined);
      }
      return await this.dispatch(id, request);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status >= 500) {
        this.logger.error({ request_id: id, path: request.path, err: err instanceof Error ? err.message : String(err) }, 'request failed');
      }
      return { status, body: { errors: [publicMessageOf(err)] } };
    }
  }

  /**
   * A standby answers what it can from its own caches — after `sync`, so every change committed
   * before the request arrived has been applied — and forwards to the active node any request
   * that tries to write.
   */
  private async handleOnStandby(id: string, request: HostRequest, forwarded: boolean): Promise<HostResponse> {
    const ha = this.ha!;
    const again = () => new NotActiveError('this node is not the active node (the request was forwarded here during a change of leader); retry');
    if (!this.mountTable) {
      if (forwarded) throw again();
      return ha.forward(request);
    }
    if (this.mintsServiceToken(request.path)) {
      // A login that will store a service token would be run twice (its provider calls too):
      // it goes to the active node at once.
      if (forwarded) throw again();
      return ha.forward(request);
    }
    await this.shared!.sync();
    await this.settled();
    const attempt = { wrote: false };
    let response: HostResponse | undefined;
    try {
      response = await standbyAttempt.run(attempt, () => this.dispatch(id, request));
    } catch (err) {
      if (!attempt.wrote) throw err;
    }
    if (!attempt.wrote) return response!;
    if (forwarded) throw again();
    return ha.forward(request);
  }

  /**
   * Whether a request is a login whose token is a service token (stored, so written on the active
   * node). Logins that mint batch tokens (`token_type` batch or default-batch) write nothing
   * themselves and are answered by the standby.
   */
  private mintsServiceToken(path: string): boolean {
    const found = this.mountTable?.resolve(path);
    if (!found || found.mount.entry.table !== 'auth' || found.mount.entry.builtin) return false;
    if (!found.mount.backend?.isUnauthenticated(found.relative)) return false;
    const type = found.mount.entry.config.token_type ?? 'default-service';
    return type !== 'batch' && type !== 'default-batch';
  }

  /**
   * Paths a node answers about itself, even as a standby that cannot reach the store: seal status,
   * health, leader, and sealing this node.
   */
  private isNodeLocal(path: string): boolean {
    if (path !== 'sys' && !path.startsWith('sys/')) return false;
    const relative = path.slice('sys/'.length);
    return relative === 'seal' || (this.system.isAvailableSealed?.(relative) ?? false);
  }

  /** On a standby: marks the request for forwarding and throws. Elsewhere: nothing. */
  private refuseOnStandby(): void {
    if (!this.ha || this.ha.mayWrite) return;
    const attempt = standbyAttempt.getStore();
    if (attempt) attempt.wrote = true;
    throw new NotActiveError();
  }

  /**
   * A request a standby of this cluster forwarded, as that standby received it (the client's
   * address is the one it vouches for); undefined for a request without forwarding headers, or on
   * a sealed node, which trusts nothing. Forwarding headers that do not verify are refused rather
   * than ignored: only a standby sets them, so a failure is a probe, a replay or a misconfigured
   * cluster, and each should be seen.
   */
  private acceptForwarded(request: HostRequest): HostRequest | undefined {
    const check = checkForwarded(request, this.forwardSigner, this.forwardedNonces);
    if (check && 'refused' in check) {
      this.logger.warn({ remote_address: request.remoteAddress, reason: check.refused }, 'refused a request whose forwarding headers do not verify');
      throw new PermissionDeniedError('the X-Keywarden-Forwarded-* headers do not verify: only a standby of this cluster sets them, once per request');
    }
    return check?.request;
  }

  /** The key standbys and the active node authenticate forwarded requests with. */
  private forwardKey(): Buffer | undefined {
    if (this.barrier.sealed) return undefined;
    return (this.forwardingKey ??= this.barrier.deriveKey('ha request forwarding'));
  }

  /** Resolves when every invalidation started so far has been applied. */
  private async settled(): Promise<void> {
    while (this.invalidating.size > 0) await Promise.all([...this.invalidating]);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((err: unknown) => {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'HA: applying a change from another node failed');
    });
    this.invalidating.add(tracked);
    void tracked.finally(() => this.invalidating.delete(tracked));
  }

  /** Another node changed `keys` in the shared store: drop or re-read what this node holds of them. */
  private onRemoteChange(change: { keys: readonly string[] } | { resync: true }): void {
    if (this.barrier.sealed) return;
    if (!this.mountTable) {
      // Not loaded yet (a fresh cluster): perhaps it can be now. A load already running may have
      // read the tables before this change, so whatever it loaded is read again afterwards.
      if (this.ha?.state === 'standby') this.track(this.loadStateReadOnly().then(() => this.rereadLoadedState()));
      return;
    }
    if ('resync' in change) {
      this.track(this.resync());
      return;
    }
    let mounts = false;
    for (const key of change.keys) {
      if (key === 'core/keyring') this.track(this.barrier.reloadKeyring());
      else if (MOUNT_TABLES.has(key)) mounts = true;
      else if (key === AUDIT_TABLE_KEY) this.track(this.audit.load());
      else if (key === KEYS.cluster) this.track(this.loadClusterInfo().then((info) => (this.clusterInfo = info)));
      else if (key.startsWith('sys/policy/')) this.policies.remoteChanged(key);
      else if (key.startsWith('sys/token/')) this.tokens.remoteChanged(key);
      else {
        const inMount = /^(?:logical|auth)\/([^/]+)\/(.*)$/.exec(key);
        if (inMount) this.mountTable.byUuid(inMount[1]!)?.backend?.invalidate?.(inMount[2]!);
      }
    }
    if (mounts) this.track(this.mountTable.sync());
  }

  /** Reads again what loading reads (mount tables, audit devices, cluster info), when loaded. */
  private async rereadLoadedState(): Promise<void> {
    if (!this.mountTable) return;
    await this.mountTable.sync();
    await this.audit.load();
    this.clusterInfo = await this.loadClusterInfo();
  }

  /** Changes may have been missed (the feed reconnected): drop every cache and rebuild every backend. */
  private async resync(): Promise<void> {
    const table = this.mountTable;
    if (!table) return;
    this.tokens.reset();
    this.policies.reset();
    await this.barrier.reloadKeyring();
    await table.sync();
    await table.reload(table.allMounts());
    await this.audit.load();
    this.logger.info('HA: caches rebuilt after the change feed reconnected');
  }

  private async dispatch(id: string, request: HostRequest): Promise<HostResponse> {
    const operation = operationOf(request);
    let path = request.path;
    if (path.split('/').some((segment) => segment === '..' || segment === '.')) {
      throw new BadRequestError('path cannot contain parent references');
    }
    if (operation === 'list' && !path.endsWith('/')) path += '/';

    const data = requestData(request, operation);
    const wantsHelp = request.query.help !== undefined && safeBool(request.query.help);

    // Route: the sys backend is always there; everything else needs the unsealed mount table.
    let backend: Backend;
    let relative: string;
    let live: LiveMount | undefined;
    let release = () => {};
    if (path === 'sys' || path.startsWith('sys/')) {
      backend = this.system;
      relative = path.slice('sys/'.length);
      if (this.barrier.sealed && !backend.isAvailableSealed?.(relative)) throw new SealedError();
    } else {
      if (this.barrier.sealed) throw new SealedError();
      const found = this.mountTable?.resolve(path);
      if (!found) throw new NotFoundError(`no handler for route ${JSON.stringify(path)}. route entry not found.`);
      live = found.mount;
      relative = found.relative;
      const acquired = live.acquire();
      backend = acquired.backend;
      release = acquired.release;
    }

    try {
      const unauthenticated = backend.isUnauthenticated(relative);
      const audited = this.audit.hasDevices() && !this.barrier.sealed && !(backend.isAvailableSealed?.(relative) ?? false);
      const token = await this.authenticate(request, unauthenticated);
      if (wantsHelp) {
        if (!token && !unauthenticated) throw new PermissionDeniedError();
        return { status: 200, body: backend.help(relative) };
      }
      const auth: RequestAuth | undefined = token
        ? {
            accessor: token.entry.accessor,
            policies: token.entry.policies,
            displayName: token.entry.displayName,
            metadata: token.entry.meta ?? {},
            root: token.entry.policies.includes('root'),
            entityId: token.entry.entityId,
            tokenType: token.entry.type,
            sudo: false,
          }
        : undefined;
      const mount = live?.entry;
      const logical: LogicalRequest = {
        id,
        operation,
        path: relative,
        data,
        storage: live?.storage ?? new StorageView(this.barrier, 'sys/'),
        mount: mount
          ? { path: live!.routePrefix, type: mount.type, accessor: mount.accessor, uuid: mount.uuid }
          : { path: 'sys/', type: 'system', accessor: 'system', uuid: 'system' },
        clientToken: tokenOf(request),
        auth,
        headers: request.headers,
        connection: { remoteAddress: request.remoteAddress },
      };
      const auditBase = (): AuditInput => ({
        request: {
          id,
          operation: logical.operation,
          path,
          data,
          ...(logical.clientToken ? { clientToken: logical.clientToken } : {}),
          ...(token?.entry.accessor ? { clientTokenAccessor: token.entry.accessor } : {}),
          mountPoint: logical.mount.path,
          mountType: logical.mount.type,
          mountAccessor: logical.mount.accessor,
          remoteAddress: request.remoteAddress,
        },
        ...(token
          ? {
              auth: {
                ...(logical.clientToken ? { clientToken: logical.clientToken } : {}),
                accessor: token.entry.accessor,
                displayName: token.entry.displayName,
                policies: token.entry.policies,
                tokenPolicies: token.entry.policies,
                metadata: token.entry.meta ?? {},
                entityId: token.entry.entityId,
                tokenType: token.entry.type,
                tokenTtl: token.entry.ttl,
                tokenIssueTime: new Date(token.entry.creationTime * 1000).toISOString(),
              },
            }
          : {}),
        nonHmacRequestKeys: mount?.config.audit_non_hmac_request_keys ?? [],
        nonHmacResponseKeys: mount?.config.audit_non_hmac_response_keys ?? [],
      });

      const prepared = await backend.prepare(logical);
      let lastUse = false;
      if (!unauthenticated) {
        const entry = token!.entry;
        const acl = await this.aclFor(entry);
        const decision = acl.allowOperation({ path, operation: prepared.operation, data });
        const denied = !decision.allowed ? 'permission denied' : prepared.sudo && !decision.sudo ? 'permission denied' : undefined;
        if (denied) {
          if (audited) {
            await this.audit.logRequest(auditBase());
            await this.audit.logResponse({ ...auditBase(), error: denied });
          }
          throw new PermissionDeniedError(denied);
        }
        auth!.sudo = decision.sudo;
        const use = await this.tokens.use(token!);
        if (!use.allowed) throw new PermissionDeniedError();
        lastUse = use.last;
      }
      if (audited) await this.audit.logRequest(auditBase());

      let response: LogicalResponse | null;
      try {
        response = await prepared.execute();
        if (response?.auth) {
          if (!live || live.entry.table !== 'auth') throw new Error('only auth methods may return an auth result');
          const minted = await this.mintLoginToken(live, path, response.auth);
          response = { ...response, auth: undefined, tokenAuth: minted.block, warnings: [...(response.warnings ?? []), ...minted.warnings] };
          if (response.warnings?.length === 0) delete response.warnings;
        }
      } catch (err) {
        if (audited) await this.audit.logResponse({ ...auditBase(), error: publicMessageOf(err) }).catch(() => undefined);
        throw err;
      } finally {
        if (lastUse) await this.tokens.revokeTree(token!.hash);
      }
      if (audited) {
        await this.audit.logResponse({
          ...auditBase(),
          response: { data: response?.data ?? null, warnings: response?.warnings ?? null, auth: response?.tokenAuth ?? null },
        });
      }
      return this.shape(id, path, prepared.operation, response);
    } finally {
      release();
    }
  }

  /** The caller's token: undefined without one; 403 for a bad one unless the path needs none. */
  private async authenticate(request: HostRequest, unauthenticated: boolean): Promise<ResolvedToken | undefined> {
    const id = tokenOf(request);
    if (!id || this.barrier.sealed) {
      if (!unauthenticated) throw new PermissionDeniedError();
      return undefined;
    }
    let token: ResolvedToken | undefined;
    try {
      token = await this.tokens.lookup(id);
    } catch (err) {
      // A path that needs no token (health, seal status, login) still answers when storage is down.
      if (!unauthenticated) throw err;
      return undefined;
    }
    const usable = token && token.entry.numUses >= 0 && cidrAllows(token.entry.boundCidrs, request.remoteAddress);
    if (!usable) {
      // A bad token on an unauthenticated path (login, health) is ignored, as in Vault.
      if (!unauthenticated) throw new PermissionDeniedError();
      return undefined;
    }
    return token;
  }

  /** A login's auth result → a token, with TTLs from the result, the mount's tune and the system. */
  private async mintLoginToken(live: LiveMount, path: string, result: AuthResult): Promise<{ block: Record<string, unknown>; warnings: string[] }> {
    const entry = live.entry;
    const view = this.mountTable!.systemViewFor(live);
    let entityId = '';
    if (result.alias) {
      const resolved = await this.identity.resolveAlias({
        mountAccessor: entry.accessor,
        mountType: entry.type,
        mountPath: live.routePrefix,
        name: result.alias.name,
        ...(result.alias.metadata ? { metadata: result.alias.metadata } : {}),
      });
      entityId = resolved.entityId;
    }
    const tune = entry.config.token_type ?? 'default-service';
    const asked = result.tokenType ?? 'default';
    const type = tune === 'service' || tune === 'batch' ? tune : asked === 'default' ? (tune === 'default-batch' ? 'batch' : 'service') : asked;
    const prefix = entry.path.replace(/\/$/, '').replace(/\//g, '-');
    const issued = await issueToken(this.tokens, {
      policies: result.policies,
      noDefaultPolicy: result.noDefaultPolicy ?? false,
      meta: result.metadata ?? null,
      displayName: result.displayName ? `${prefix}-${result.displayName}` : prefix,
      numUses: result.numUses ?? 0,
      ttl: result.ttl ?? 0,
      explicitMaxTtl: result.explicitMaxTtl ?? 0,
      period: result.period ?? 0,
      roleMaxTtl: result.maxTtl ?? 0,
      renewable: result.renewable ?? true,
      type,
      boundCidrs: result.boundCidrs ?? [],
      entityId,
      role: '',
      path,
      parent: undefined,
      origin: {
        mountAccessor: entry.accessor,
        mountPath: live.routePrefix,
        policies: result.policies,
        ...(result.internalData ? { internalData: result.internalData } : {}),
        ...(result.metadata ? { metadata: result.metadata } : {}),
        ...(result.displayName ? { displayName: result.displayName } : {}),
      },
      mountDefault: view.defaultLeaseTtl(),
      mountMax: view.maxLeaseTtl(),
    });
    return { block: authBlock(issued.id, issued.entry), warnings: issued.warnings };
  }

  /**
   * Renews a token. A token from a login asks its auth method first (the method may refuse, or
   * change the TTL it allows); then the TTL is extended within the token's maximum lifetime.
   */
  private async renewToken(token: ResolvedToken, increment: number, req: LogicalRequest): Promise<{ entry: TokenEntry; warnings: string[] }> {
    const entry = token.entry;
    if (!entry.renewable) throw new BadRequestError('token is not renewable');
    let period = entry.period;
    let requested = increment;
    let maxTtl = entry.maxTtl;
    const origin = entry.origin;
    if (origin) {
      const live = this.mountTable?.byAccessor(origin.mountAccessor);
      if (!live) throw new BadRequestError('the auth method that issued this token is no longer mounted');
      const acquired = live.acquire();
      try {
        if (acquired.backend.renew) {
          const renewed = await acquired.backend.renew(
            {
              ...req,
              operation: 'update',
              path: '',
              data: {},
              storage: live.storage,
              mount: { path: live.routePrefix, type: live.entry.type, accessor: live.entry.accessor, uuid: live.entry.uuid },
            },
            {
              policies: origin.policies,
              ...(origin.metadata ? { metadata: origin.metadata } : {}),
              ...(origin.internalData ? { internalData: origin.internalData } : {}),
              ...(origin.displayName ? { displayName: origin.displayName } : {}),
              ttl: entry.creationTtl,
              period: entry.period,
            },
          );
          if (renewed.period !== undefined) period = renewed.period;
          if (!increment && renewed.ttl) requested = renewed.ttl;
          // The auth method's current maximum (a role's token_max_ttl may have been lowered).
          if (renewed.maxTtl) maxTtl = entry.maxTtl ? Math.min(entry.maxTtl, renewed.maxTtl) : renewed.maxTtl;
        }
      } finally {
        acquired.release();
      }
    }
    const now = this.tokens.now();
    const next = renewTokenTtl({
      increment: requested,
      period,
      creationTtl: entry.creationTtl,
      creationTime: entry.creationTime,
      maxTtl,
      explicitMaxTtl: entry.explicitMaxTtl,
      now,
    });
    const saved = await this.tokens.saveRenewal(token.hash, (current) => ({
      ...current,
      ttl: next.ttl,
      expireTime: next.expireTime,
      period,
      lastRenewalTime: now,
    }));
    if (!saved) throw new BadRequestError('invalid token');
    return { entry: saved, warnings: next.warnings };
  }

  private shape(id: string, path: string, operation: Operation, response: LogicalResponse | null): HostResponse {
    if (response?.raw) return { status: response.raw.status, body: response.raw.body };
    if (!response || (!response.data && !response.warnings && !response.tokenAuth)) {
      if (operation === 'read' || operation === 'list') return { status: 404, body: { errors: [] } };
      return { status: 204 };
    }
    if (operation === 'list') {
      const keys = response.data?.keys;
      if (!Array.isArray(keys) || keys.length === 0) return { status: 404, body: { errors: [] } };
    }
    const body: Record<string, unknown> = {
      request_id: id,
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: response.data ?? null,
      wrap_info: null,
      warnings: response.warnings && response.warnings.length > 0 ? response.warnings : null,
      auth: response.tokenAuth ?? null,
    };
    if (response.data && TOP_LEVEL_DATA_ROUTES.some((re) => re.test(path))) {
      for (const [key, value] of Object.entries(response.data)) {
        if (!(key in body)) body[key] = value;
      }
    }
    return { status: response.status ?? 200, body };
  }
}

/** Method → operation, as Vault maps them. */
function operationOf(request: HostRequest): Operation {
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const list = request.query.list;
      if (list === undefined) return 'read';
      try {
        return parseBool(list) ? 'list' : 'read';
      } catch (err) {
        if (err instanceof CoercionError) throw new BadRequestError(`invalid value for "list": ${err.message}`);
        throw err;
      }
    }
    case 'LIST':
      return 'list';
    case 'POST':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    case 'PATCH': {
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/merge-patch+json') {
        throw new UnsupportedMediaTypeError('PATCH requires Content-Type: application/merge-patch+json');
      }
      return 'patch';
    }
    default:
      throw new UnsupportedOperationError(`unsupported method ${request.method}`);
  }
}

function safeBool(text: string): boolean {
  try {
    return parseBool(text);
  } catch {
    return false;
  }
}

/** Query parameters are the data of reads, lists and deletes; bodies are the data of writes. */
function requestData(request: HostRequest, operation: Operation): Record<string, unknown> {
  if (operation === 'read' || operation === 'list' || (operation === 'delete' && request.body === undefined)) {
    const { list: _list, help: _help, ...rest } = request.query;
    return { ...rest };
  }
  if (request.body === undefined || request.body === null) return {};
  if (typeof request.body !== 'object' || Array.isArray(request.body)) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  return request.body as Record<string, unknown>;
}

/** `X-Vault-Token`, then `X-Service-Token`, then `Authorization: Bearer`. */
function tokenOf(request: HostRequest): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const direct = first(request.headers['x-vault-token']) ?? first(request.headers['x-service-token']);
  if (direct) return direct.trim();
  const authorization = request.headers.authorization;
  for (const value of Array.isArray(authorization) ? authorization : authorization ? [authorization] : []) {
    if (value.startsWith('Bearer ')) return value.slice('Bearer '.length).trim();
  }
  return undefined;
}
