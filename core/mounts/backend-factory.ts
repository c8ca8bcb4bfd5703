/**
 * Builds the backend a mount runs: its plugin is looked up in the catalog at every build (enable,
 * reload, unseal), then built in-process — a built-in, in a child DI container of its own — or
 * started isolated, in a process of its own (an external plugin). What was made for the backend
 * goes with it when it is closed.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DependencyContainer } from '../di/container.js';
import { errorMessage } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { PluginConfig, SystemView } from '../plugins/plugin.js';
import { createPluginContext } from '../plugins/context.js';
import { PluginCatalog, type ResolvedPlugin } from '../plugins/catalog.js';
import { DEFAULT_ISOLATION_LIMITS, IsolatedBackend, type IsolationLimits } from '../plugins/isolation/isolated-backend.js';
import type { Storage } from '../../storage/storage.js';
import type { BuiltBackend, LiveMount } from './live-mount.js';
import type { MountEntry, MountTableName } from './mount-entry.js';

export interface SystemDefaults {
  /** Seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

export interface BackendFactoryDeps {
  /** The plugin services (core/plugins/services.ts): every in-process mount's own container is a child of it. */
  readonly root: DependencyContainer;
  /** A plugin's block of the configuration file, by plugin name; none: every plugin gets an empty one. */
  readonly pluginConfig?: (name: string) => PluginConfig;
  /** The barrier: where the catalog keeps external plugins when no catalog is given. */
  readonly storage: Storage;
  /** Built-in plugins: they run in-process. */
  readonly registry: PluginRegistry;
  /** Every plugin a mount may run; built from `registry` alone (no external plugins) when omitted. */
  readonly catalog?: PluginCatalog;
  /** How external plugins' processes are bounded. */
  readonly isolation?: IsolationLimits;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly defaults: SystemDefaults;
}

export class BackendFactory {
  private readonly catalog: PluginCatalog;

  constructor(private readonly deps: BackendFactoryDeps) {
    this.catalog = deps.catalog ?? new PluginCatalog(deps.storage, deps.registry, undefined);
  }

  /** The plugin a mount of `type` at `version` runs. @throws BadRequestError when the catalog has none. */
  resolve(table: MountTableName, type: string, version: string): Promise<ResolvedPlugin> {
    return this.catalog.resolve(table, type, version);
  }

  /**
   * Builds a backend for `mount` as `entry` describes it (a tune builds for the entry it is about to
   * store). @throws PluginError when the plugin cannot start.
   */
  async build(entry: MountEntry, mount: LiveMount, resolved?: ResolvedPlugin): Promise<BuiltBackend> {
    const plugin = resolved ?? (await this.resolve(entry.table, entry.type, entry.plugin_version));
    return plugin.builtin ? this.buildInProcess(entry, mount, plugin) : this.startIsolated(entry, mount, plugin);
  }

  /** The TTLs a mount's backend reads: its own tune, or the system's where it sets none (read at each call, so a tune applies at once). */
  systemView(mount: LiveMount): SystemView {
    const defaults = this.deps.defaults;
    return {
      defaultLeaseTtl: () => mount.entry.config.default_lease_ttl || defaults.defaultLeaseTtl,
      maxLeaseTtl: () => mount.entry.config.max_lease_ttl || defaults.maxLeaseTtl,
    };
  }

  private configOf(name: string): PluginConfig {
    return this.deps.pluginConfig?.(name) ?? {};
  }

  private loggerFor(mount: LiveMount, bindings: Record<string, string>): Logger {
    const logger = this.deps.logger.child({ mount: mount.routePrefix, ...bindings });
    if (mount.logLevel) logger.level = mount.logLevel;
    return logger;
  }

  private async buildInProcess(entry: MountEntry, mount: LiveMount, plugin: Extract<ResolvedPlugin, { builtin: true }>): Promise<BuiltBackend> {
    const logger = this.loggerFor(mount, {});
    const { context, dispose } = createPluginContext({
      services: this.deps.root,
      mount: entry,
      storage: mount.storage,
      logger,
      clock: this.deps.clock,
      system: this.systemView(mount),
      config: this.configOf(plugin.manifest.name),
    });
    let backend: Backend;
    try {
      backend = await this.deps.registry.build(plugin.manifest, context);
    } catch (err) {
      await dispose();
      throw err;
    }
    return this.built(backend, { version: plugin.version, sha256: '' }, logger, mount, dispose);
  }

  /** An external plugin: its backend runs in a process of its own; the host makes nothing else for it. */
  private async startIsolated(entry: MountEntry, mount: LiveMount, plugin: Extract<ResolvedPlugin, { builtin: false }>): Promise<BuiltBackend> {
    const view = this.systemView(mount);
    const logger = this.loggerFor(mount, { plugin: plugin.entry.name });
    // The process is started for `entry` (a tune builds before it stores the entry); once this
    // backend serves, a restarted process gets the mount's entry as it is then.
    let serving: Backend | undefined;
    const backend = await IsolatedBackend.start({
      entry: plugin.entry,
      directory: this.catalog.directory,
      mount: () => (serving !== undefined && mount.backend === serving ? mount.entry : entry),
      storage: mount.storage,
      logger,
      system: () => ({ defaultLeaseTtl: view.defaultLeaseTtl(), maxLeaseTtl: view.maxLeaseTtl() }),
      limits: this.deps.isolation ?? DEFAULT_ISOLATION_LIMITS,
      config: this.configOf(plugin.entry.name),
    });
    serving = backend;
    return this.built(backend, { version: plugin.version, sha256: plugin.entry.sha256 }, logger, mount, async () => {});
  }

  /** Closing lets the backend clean up, then releases what was made for it; a failing cleanup is logged. */
  private built(backend: Backend, running: BuiltBackend['running'], logger: Logger, mount: LiveMount, release: () => Promise<void>): BuiltBackend {
    return {
      backend,
      running,
      logger,
      close: async () => {
        try {
          await backend.cleanup?.();
        } catch (err) {
          this.deps.logger.warn({ mount: mount.routePrefix, err: errorMessage(err) }, 'backend cleanup failed');
        }
        await release();
      },
    };
  }
}
