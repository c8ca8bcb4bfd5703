/**
 * The host: the composition root. It builds storage's barrier, the seal, the stores (tokens,
 * policies, identity, audit), the sys backend and the request pipeline (core/pipeline), and owns
 * their lifecycle: loading on unseal, dropping on seal, HA promotion, and the periodic work.
 * Requests themselves never pass through here beyond `handle`.
 */
import type { Logger } from 'pino';
import { Barrier } from '../storage/barrier.js';
import type { PhysicalStorage } from '../storage/storage.js';
import { isShared } from '../storage/storage.js';
import type { HaManager } from './ha/ha-manager.js';
import { joinCluster } from './ha/cluster-node.js';
import { TOKENS } from './di/tokens.js';
import { pluginServicesContainer } from './plugins/services.js';
import { createRootContainer, registerValue, type DependencyContainer } from './di/container.js';
import type { Backend } from './framework/backend.js';
import type { MountTable } from './mounts/mount-table.js';
import { PluginRegistry } from './plugins/registry.js';
import { PluginCatalog } from './plugins/catalog.js';
import type { IsolationLimits } from './plugins/isolation/isolated-backend.js';
import { SealManager } from './seal/seal-manager.js';
import type { SealDeps } from './seal/seal-api.js';
import type { AutoSeal } from './seal/auto-seal.js';
import type { Backoff } from './seal/auto-unseal.js';
import type { HealthIntervals } from './seal/seal-health.js';
import { TokenStore } from './auth/token-store.js';
import { SecretLeases } from './leases/secret-leases.js';
import { Quotas } from './quotas/quotas.js';
import { CorsSettings } from './http/cors.js';
import { PolicyStore } from './auth/policy-store.js';
import { TokenAcls } from './auth/token-acls.js';
import { IdentityStore } from './auth/identity/identity-store.js';
import { AuditBroker } from './audit/broker.js';
import { createSystemBackend } from './system/backend.js';
import { mountedPaths, openApiDocument } from './system/openapi.js';
import type { SystemDeps } from './system/services.js';
import type { WholeServer } from './system/whole-server.js';
import { systemClock, type Clock } from './clock.js';
import { HostState } from './host-state.js';
import { Pipeline } from './pipeline/pipeline.js';
import { ResponseWrapper } from './wrapping/wrapper.js';
import type { StandbyStrategy } from './ha/standby.js';
import { PeriodicWork } from './periodic-work.js';
import type { HostRequest, HostResponse } from './pipeline/types.js';
import type { BodyAllowance, RequestHead } from './pipeline/body-allowance.js';
import { VERSION } from './version.js';
import { recordVersion } from './system/version-history.js';
import { Snapshots } from './snapshot/snapshots.js';
import { Metrics } from './metrics/metrics.js';
import { timedStorage } from './metrics/timed-storage.js';
import { InFlightRequests } from './pipeline/in-flight.js';
import { LogLevels } from './log-levels.js';
import { SEALED_FAREWELL, type LogTap } from './log-tap.js';
import { DEFAULT_TELEMETRY, pluginConfigOf, type ServerConfig } from './config/config.js';
import { sanitizedConfig } from './config/sanitized.js';
import type { WasmCrypto } from '../wasm/index.js';
import { DEFAULT_AUDIT_CONFIG, type AuditConfig, type AuditRules } from './audit/rules.js';
import { errorMessage } from './errors.js';
import { UserLockout } from './auth/lockout/user-lockout.js';

export { VERSION } from './version.js';
export type { HostRequest, HostResponse } from './pipeline/types.js';
export type { BodyAllowance, RequestHead } from './pipeline/body-allowance.js';

export interface HostOptions {
  readonly physical: PhysicalStorage;
  readonly registry: PluginRegistry;
  /** Where external plugins' modules live (the config's plugin_directory); none: built-ins only. */
  readonly pluginDirectory?: string;
  /** How external plugins' processes are bounded (defaults: DEFAULT_ISOLATION_LIMITS). */
  readonly isolation?: IsolationLimits;
  readonly logger: Logger;
  /** The lines `logger` writes, for sys/monitor (core/log-tap.ts). */
  readonly logTap?: LogTap;
  readonly clock?: Clock;
  /** System TTL defaults in seconds (768h each unless configured). */
  readonly defaultLeaseTtl?: number;
  readonly maxLeaseTtl?: number;
  /** How often backends' periodic hooks run, in ms; 0 disables the timer. */
  readonly periodicIntervalMs?: number;
  /** The loaded WASM crypto core: offered to plugins as SERVICES.WasmCrypto; the audit broker hashes entries with it. */
  readonly wasm?: WasmCrypto;
  /** HA over a shared store (`physical` must then be a SharedStorage). */
  readonly ha?: HaManager;
  /** Refuse Vault's unauthenticated `sys/generate-root/*` (listener `disable_unauthed_generate_root_endpoints`). */
  readonly disableUnauthedGenerateRoot?: boolean;
  /** The name a new cluster gets on its first unseal (the config's cluster_name). */
  readonly clusterName?: string;
  /** The whole configuration: telemetry, the configured log level, and sys/config/state/sanitized. */
  readonly config: ServerConfig;
  /** The configuration's `seal` stanza, made (core/seal/auto-seals.ts); absent: Shamir. */
  readonly autoSeal?: AutoSeal;
  /** The seals when every stanza is disabled: the store moves back to Shamir shares (SealDeps.shamirFrom). */
  readonly shamirFrom?: AutoSeal;
  /** Between auto-unseal attempts, and between the seals' health checks (tests shorten them). */
  readonly autoUnsealBackoff?: Backoff;
  readonly sealHealthIntervals?: HealthIntervals;
  /** The other workers of this server, which follow this one's seal and unseal (SealDeps.siblings). */
  readonly siblings?: SealDeps['siblings'];
  /** This process is one worker of several: sys/metrics and sys/in-flight-req report them all. */
  readonly wholeServer?: WholeServer;
}

const DEFAULT_TTL = 768 * 3600;

export class Host {
  readonly barrier: Barrier;
  readonly seal: SealManager;
  readonly tokens: TokenStore;
  /** The leases of the secrets engines' secrets (core/leases/). */
  readonly leases: SecretLeases;
  /** Rate-limit quotas (sys/quotas/*). */
  readonly quotas: Quotas;
  /** Cross-origin requests (sys/config/cors), read by the HTTP layer. */
  readonly cors: CorsSettings;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  readonly audit: AuditBroker;
  readonly registry: PluginRegistry;
  readonly catalog: PluginCatalog;
  readonly container: DependencyContainer;
  /** The services plugins may have (core/plugins/services.ts), apart from the host's own container. */
  readonly pluginServices: DependencyContainer;
  readonly ha: HaManager | undefined;
  readonly metrics: Metrics;
  /** The requests this process is answering (sys/in-flight-req). */
  readonly inFlight: InFlightRequests;
  /** Log levels at run time (sys/loggers; SIGHUP sets the configured one). */
  readonly logLevels: LogLevels;
  private readonly state: HostState;
  private readonly system: Backend;
  private readonly pipeline: Pipeline;
  private readonly standby: StandbyStrategy | undefined;
  private readonly logger: Logger;
  private readonly logTap: LogTap | undefined;
  private readonly periodic: PeriodicWork;
  private readonly clock: Clock;
  /** The configuration's audit settings; SIGHUP replaces them (reconfigureAudit). */
  private auditConfig: AuditConfig;
  /** The directories no audit file may be written to: where plugins run from, and the data. */
  private readonly auditForbidden: Pick<AuditRules, 'pluginDirectory' | 'dataDirectory'>;

  constructor(options: HostOptions) {
    this.logger = options.logger;
    this.logTap = options.logTap;
    const clock = options.clock ?? systemClock;
    this.clock = clock;
    this.registry = options.registry;
    const defaults = { defaultLeaseTtl: options.defaultLeaseTtl ?? DEFAULT_TTL, maxLeaseTtl: options.maxLeaseTtl ?? DEFAULT_TTL };
    this.metrics = new Metrics(options.config.telemetry ?? DEFAULT_TELEMETRY, {
      unsealed: () => !this.barrier.sealed,
      tokens: () => this.tokens.counts,
      crypto: () => options.wasm?.dispatched ?? {},
      ...(options.ha ? { ha: () => ({ active: options.ha!.state === 'active', ...options.ha!.counts }) } : {}),
    }, options.wholeServer);
    this.barrier = new Barrier(this.metrics.enabled ? timedStorage(options.physical, this.metrics) : options.physical, { clock });
    this.tokens = new TokenStore(this.barrier, clock);
    this.leases = new SecretLeases({ storage: this.barrier, clock, logger: this.logger, mounts: () => this.state.mounts, tokens: this.tokens });
    this.quotas = new Quotas(this.barrier);
    this.cors = new CorsSettings(this.barrier);
    this.policies = new PolicyStore(this.barrier);
    this.identity = new IdentityStore(this.barrier, clock);
    this.auditConfig = options.config.audit ?? DEFAULT_AUDIT_CONFIG;
    this.auditForbidden = {
      ...(options.pluginDirectory ? { pluginDirectory: options.pluginDirectory } : {}),
      ...(options.config.storage.kind === 'leveldb' ? { dataDirectory: options.config.storage.path } : {}),
    };
    this.audit = new AuditBroker(this.barrier, this.logger, clock, this.auditRules(), options.wasm);
    this.catalog = new PluginCatalog(this.barrier, this.registry, options.pluginDirectory);
    this.container = createRootContainer();
    registerValue(this.container, TOKENS.PhysicalStorage, options.physical);
    registerValue(this.container, TOKENS.Barrier, this.barrier);
    registerValue(this.container, TOKENS.Storage, this.barrier);
    registerValue(this.container, TOKENS.Clock, clock);
    registerValue(this.container, TOKENS.Logger, this.logger);
    this.pluginServices = pluginServicesContainer({
      ...(options.wasm ? { WasmCrypto: options.wasm } : {}),
      ...(this.metrics.enabled ? { Metrics: this.metrics } : {}),
    });
    const inFlight = (this.inFlight = new InFlightRequests());
    this.metrics.countInFlight(() => inFlight.size);
    this.state = new HostState({
      container: this.pluginServices,
      pluginConfig: (name) => pluginConfigOf(options.config, name),
      barrier: this.barrier,
      registry: this.registry,
      catalog: this.catalog,
      ...(options.isolation ? { isolation: options.isolation } : {}),
      logger: this.logger,
      clock,
      defaults,
      tokens: this.tokens,
      leases: this.leases,
      policies: this.policies,
      identity: this.identity,
      audit: this.audit,
      ...(options.clusterName ? { clusterName: options.clusterName } : {}),
      ...(options.config.apiAddr ? { apiAddr: options.config.apiAddr } : {}),
    });
    this.logLevels = new LogLevels(this.logger, options.config.logLevel, this.state);
    const shared = isShared(options.physical) ? options.physical : undefined;
    this.seal = new SealManager(
      options.physical,
      this.barrier,
      {
        afterUnseal: () => this.afterUnseal(),
        beforeSeal: () => this.beforeSeal(),
        createRootToken: () => this.tokens.createRootToken(),
        revokeRootToken: async (token) => this.tokens.revokeTree(await this.tokens.hashToken(token)),
        clock,
        ...(shared ? { clusterLock: (name, work) => shared.exclusive(name, work) } : {}),
        ...(options.autoSeal ? { autoSeal: options.autoSeal, log: this.logger } : {}),
        ...(options.shamirFrom ? { shamirFrom: options.shamirFrom, log: this.logger } : {}),
        ...(options.autoUnsealBackoff ? { backoff: options.autoUnsealBackoff } : {}),
        ...(options.sealHealthIntervals ? { healthIntervals: options.sealHealthIntervals } : {}),
        isActive: () => !this.ha || this.ha.state === 'active',
        ...(options.ha && !options.siblings ? { migrateWhenActive: true } : {}),
        ...(options.siblings ? { siblings: options.siblings } : {}),
      },
    );
    const snapshots = new Snapshots(options.physical, this.barrier, this.seal, clock, this.state, {
      exclusive: (work) => this.pipeline.exclusive(work),
      unload: () => this.state.unload(),
      load: async () => {
        this.quotas.reset();
        this.cors.reset();
        await this.state.load();
        // The active node of a cluster makes sure the token store's keys exist, as on promotion.
        if (this.ha) await this.tokens.ensureSecrets();
        // The restored table is the snapshot's; the configuration's devices apply to it as after an unseal.
        await this.declareAuditDevices();
      },
      seal: () => this.seal.seal(),
    });
    const acls = new TokenAcls(this.policies, this.identity);
    const lockout = new UserLockout(this.barrier, clock, options.config.userLockout ?? {});
    const wrapper = new ResponseWrapper(this.tokens, this.state, defaults.maxLeaseTtl);
    const services: SystemDeps = {
      seal: this.seal,
      barrier: this.barrier,
      unsealed: this.state,
      registry: this.registry,
      catalog: this.catalog,
      clock,
      authz: { tokens: this.tokens, policies: this.policies, aclFor: (entry) => acls.aclFor(entry) },
      leases: this.leases,
      audit: this.audit,
      openapi: async (authenticated) => openApiDocument(mountedPaths(this.system, this.state.loaded ? this.state.mounts : undefined), VERSION, (path) => authenticated || path.unauthenticated),
      storageType: options.physical.kind,
      ...(options.ha ? { ha: options.ha } : {}),
      requireActive: () => this.standby?.refuseWrites(),
      wrapping: wrapper,
      version: VERSION,
      ...(options.config.apiAddr ? { apiAddr: options.config.apiAddr } : {}),
      defaultLeaseTtl: defaults.defaultLeaseTtl,
      maxLeaseTtl: defaults.maxLeaseTtl,
      unauthedGenerateRoot: !options.disableUnauthedGenerateRoot,
      snapshots,
      metrics: this.metrics,
      inFlight,
      ...(options.wholeServer ? { wholeServer: options.wholeServer } : {}),
      // The audit settings as SIGHUP last set them.
      configState: () => sanitizedConfig({ ...options.config, audit: this.auditConfig }),
      logLevels: this.logLevels,
      ...(options.logTap ? { logTap: options.logTap } : {}),
      diskPaths: [...new Set([process.cwd(), ...(options.config.storage.kind === 'leveldb' ? [options.config.storage.path] : [])])],
      lockout,
      quotas: this.quotas,
      identity: this.identity,
      cors: this.cors,
    };
    this.system = createSystemBackend(services);

    if (options.ha) {
      if (!shared) throw new Error('HA needs a shared physical store');
      this.ha = options.ha;
      this.standby = joinCluster({
        ha: options.ha,
        shared,
        barrier: this.barrier,
        state: this.state,
        audit: this.audit,
        policies: this.policies,
        tokens: this.tokens,
        quotas: this.quotas,
        cors: this.cors,
        system: this.system,
        logger: this.logger,
        migrateSeal: () => this.seal.migratePending(),
        activated: async () => {
          await this.declareAuditDevices();
          await recordVersion(this.barrier, VERSION, clock.now());
        },
      });
    }

    this.pipeline = new Pipeline({
      system: this.system,
      barrier: this.barrier,
      tokens: this.tokens,
      acls,
      wrapper,
      identity: this.identity,
      leases: this.leases,
      audit: this.audit,
      unsealed: this.state,
      logger: this.logger,
      ...(this.standby ? { standby: this.standby } : {}),
      inFlight,
      ...(this.metrics.enabled ? { metrics: this.metrics } : {}),
      lockout,
      quotas: {
        quotas: this.quotas,
        unsealed: this.state,
        ...(this.metrics.enabled ? { metrics: this.metrics } : {}),
        now: () => clock.now().getTime(),
      },
    });

    this.periodic = new PeriodicWork(
      { barrier: this.barrier, tokens: this.tokens, leases: this.leases, unsealed: this.state, ha: this.ha, logger: this.logger },
      options.periodicIntervalMs ?? 60_000,
    );
  }

  /** The live mount table. @throws SealedError while sealed. */
  get mounts(): MountTable {
    return this.state.mounts;
  }

  /** Answers one request through the pipeline; never throws. */
  handle(request: HostRequest): Promise<HostResponse> {
    return this.pipeline.handle(request);
  }

  /** How much of a request's body the HTTP layer may read, decided from its head (pipeline/body-allowance.ts). */
  bodyAllowance(head: RequestHead): BodyAllowance | Promise<BodyAllowance> {
    return this.pipeline.bodyAllowance(head);
  }

  /** Whether the HTTP layer hands a POST/PUT body to `path` over unread (`HostRequest.bodyStream`). */
  takesBinaryBody(path: string): boolean {
    return this.pipeline.takesBinaryBody(path);
  }

  /** Runs the periodic work once (the timer's; see PeriodicWork). */
  runPeriodic(): Promise<void> {
    return this.periodic.run();
  }

  /**
   * New audit settings from the configuration file (SIGHUP): the rules apply to devices enabled
   * from now on, and the active node applies the declared devices at once (a sealed node or a
   * standby at its next unseal or promotion).
   * @throws UnavailableError when a declared device differs from its enabled one or collides with
   *   an API-created one (then no device changes), or when one cannot be enabled.
   */
  async reconfigureAudit(config: AuditConfig): Promise<void> {
    this.auditConfig = config;
    this.audit.configure(this.auditRules());
    if (this.barrier.sealed || !this.state.loaded || (this.ha && this.ha.state !== 'active')) return;
    await this.declareAuditDevices();
  }

  /** Stops the timer and seals; the physical store is closed by its owner. */
  async shutdown(): Promise<void> {
    this.periodic.stop();
    this.metrics.close();
    // This process stops; the other workers of the server (if any) stop on their own.
    await this.seal.seal({ localOnly: true });
  }

  private async afterUnseal(): Promise<void> {
    if (!this.ha) {
      await this.state.load();
      try {
        await this.declareAuditDevices();
        await recordVersion(this.barrier, VERSION, this.clock.now());
      } catch (err) {
        this.logger.error({ err: errorMessage(err) }, 'unseal: the audit devices of the configuration could not be applied; sealed again');
        // The seal manager seals the barrier again; what was loaded goes with it.
        await this.state.unload();
        throw err;
      }
      return;
    }
    // A standby until elected: it loads without writing, then joins the election.
    this.ha.enterStandby();
    await this.state.loadReadOnly();
    this.ha.join();
  }

  private async beforeSeal(): Promise<void> {
    // Only the active node writes; a standby encrypts nothing, so it has no count to keep.
    if (!this.ha || this.ha.state === 'active') {
      await this.barrier.flushEncryptions().catch((err: unknown) => {
        this.logger.warn({ err: errorMessage(err) }, 'could not store the barrier encryption count');
      });
    }
    try {
      await this.ha?.leave();
      this.standby?.forgetKey();
    } finally {
      // Whatever failed above, the backends are torn down: their cleanup is where they forget what
      // they hold in memory (transit's key schedules in the WASM core).
      this.quotas.reset();
      this.cors.reset();
      this.logTap?.endAll(SEALED_FAREWELL);
      await this.state.unload();
    }
    this.logger.info('sealed');
  }

  /** Applies the configuration's `audit` stanzas to the table; only the active node writes it. */
  private declareAuditDevices(): Promise<void> {
    return this.audit.declare(this.auditConfig.devices);
  }

  private auditRules(): AuditRules {
    const { unsafeAllowApiAuditCreation, allowAuditLogPrefixing, apiAuditSocketAllowlist } = this.auditConfig;
    return { unsafeAllowApiAuditCreation, allowAuditLogPrefixing, apiAuditSocketAllowlist, ...this.auditForbidden };
  }
}
