/**
 * The mount tables (secrets engines and auth methods): persisted behind the barrier, one live
 * backend per mount in its own child container, longest-prefix routing, enable/disable/tune and
 * reload. Table changes are serialized; a reload swaps the backend and drains the old one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { TOKENS } from '../di/tokens.js';
import { registerValue, type DependencyContainer } from '../di/container.js';
import type { Backend } from '../framework/backend.js';
import type { MountRef } from '../framework/request.js';
import { BadRequestError, ConflictError, UnavailableError, errorMessage } from '../errors.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { SystemView } from '../plugins/plugin.js';
import { PluginCatalog, type ResolvedPlugin } from '../plugins/catalog.js';
import { DEFAULT_ISOLATION_LIMITS, IsolatedBackend, type IsolationLimits } from '../plugins/isolation/isolated-backend.js';
import type { Clock } from '../clock.js';
import type { CloudAuthConfig } from '../config/config.js';
import type { Storage } from '../../storage/storage.js';
import { StorageView, deletePrefix } from '../../storage/view.js';
import {
  defaultMountConfig,
  routePrefixOf,
  storagePrefixOf,
  type MountConfig,
  type MountEntry,
  type MountTableName,
} from './mount-entry.js';

/** Storage keys of the two tables (behind the barrier). */
export const MOUNT_TABLE_KEYS: Readonly<Record<MountTableName, string>> = {
  // The secrets-engine table, JSON `{ entries: MountEntry[] }`.
  secret: 'core/mounts',
  // The auth-method table, same shape.
  auth: 'core/auth',
};

/** Paths a secrets engine may not be mounted at or under: they belong to the host. */
const RESERVED_SECRET_PREFIXES = ['sys/', 'auth/', 'audit/', 'cubbyhole/', 'identity/'];

export interface SystemDefaults {
  /** Seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

/** The requests running on one backend instance; `idle()` resolves once none is left. */
class InFlight {
  count = 0;
  private readonly waiters: (() => void)[] = [];

  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  end(): void {
    this.count--;
    if (this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/** One request's hold on a backend (LiveMount.acquire); a second release does nothing. */
class Hold {
  private held = true;

  constructor(
    readonly backend: Backend,
    private readonly inflight: InFlight,
  ) {}

  readonly release = (): void => {
    if (!this.held) return;
    this.held = false;
    this.inflight.end();
  };
}

/** A mounted backend and what the host needs to route to it. */
export class LiveMount {
  backend: Backend | undefined;
  container: DependencyContainer | undefined;
  /** Why the backend could not be built; requests to the mount fail with it. */
  failure: string | undefined;
  /** The plugin version the current backend runs, and its module's SHA-256 (empty for a built-in). */
  running: { readonly version: string; readonly sha256: string } | undefined;
  /** The backend's logger (none for built-in mounts). */
  logger: Logger | undefined;
  /** A level set for this mount's logger alone (sys/loggers/:name); kept across reloads. */
  logLevel: string | undefined;
  /** Requests on the current backend; a swap starts a new count so the old backend drains on its own. */
  private inflight = new InFlight();

  constructor(
    public entry: MountEntry,
    readonly storage: Storage,
  ) {}

  /** The entry `prefix` and `ref` were made from: every request reads them, and an entry is replaced, never changed. */
  private madeFrom: MountEntry | undefined;
  private prefix = '';
  private reference: MountRef | undefined;

  get routePrefix(): string {
    if (this.madeFrom !== this.entry) this.remake();
    return this.prefix;
  }

  /** The mount as a backend's request names it. */
  get ref(): MountRef {
    if (this.madeFrom !== this.entry) this.remake();
    return this.reference!;
  }

  private remake(): void {
    const entry = (this.madeFrom = this.entry);
    this.prefix = routePrefixOf(entry);
    this.reference = Object.freeze({ path: this.prefix, type: entry.type, accessor: entry.accessor, uuid: entry.uuid });
  }

  /** Marks a request as running on the current backend; call `release` once when it ends. */
  acquire(): { backend: Backend; release: () => void } {
    if (!this.backend) {
      throw new UnavailableError(`mount "${this.routePrefix}" is unavailable: ${this.failure ?? 'not loaded'}`);
    }
    this.inflight.count++;
    return new Hold(this.backend, this.inflight);
  }

  /** Resolves when no request holds the backend that was current when this was called. */
  waitIdle(): Promise<void> {
    return this.inflight.idle();
  }

  /**
   * Puts a new backend in place: requests from now on get it. Resolves when the requests still
   * holding the previous backend have ended, so a busy mount cannot hold a reload back forever.
   */
  swap(backend: Backend, container: DependencyContainer, running: LiveMount['running']): Promise<void> {
    const previous = this.inflight;
    this.inflight = new InFlight();
    this.backend = backend;
    this.container = container;
    this.running = running;
    this.failure = undefined;
    return previous.idle();
  }
}

export interface EnableInput {
  readonly type: string;
  readonly description?: string;
  readonly config?: Partial<MountConfig>;
  readonly options?: Record<string, string> | null;
  readonly local?: boolean;
  readonly seal_wrap?: boolean;
  readonly external_entropy_access?: boolean;
  readonly plugin_version?: string;
}

export interface MountTableDeps {
  readonly root: DependencyContainer;
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
  /** Called after a mount left the table and before its storage is deleted (the host revokes its tokens). */
  readonly onDisable?: (entry: MountEntry, routePrefix: string) => Promise<void>;
  /** Called once a moved mount is stored at its new path (the host moves its tokens' paths along). */
  readonly onRemount?: (entry: MountEntry, fromPrefix: string, toPrefix: string) => Promise<void>;
}

export class MountTable {
  private readonly mounts = new Map<string, LiveMount>();
  private mutation: Promise<unknown> = Promise.resolve();
  private readonly catalog: PluginCatalog;

  constructor(private readonly deps: MountTableDeps) {
    this.catalog = deps.catalog ?? new PluginCatalog(deps.storage, deps.registry, undefined);
  }

  /** Reads both tables and builds every backend; a plugin that fails is logged and its mount marked failed. */
  async load(): Promise<void> {
    for (const table of ['secret', 'auth'] as const) {
      const entries = await this.readTable(table);
      for (const entry of entries) {
        const live = new LiveMount(entry, new StorageView(this.deps.storage, storagePrefixOf(entry)));
        this.mounts.set(live.routePrefix, live);
        if (entry.builtin) continue;
        await this.start(live).catch((err: unknown) => {
          live.failure = errorMessage(err);
          this.deps.logger.error({ mount: live.routePrefix, type: entry.type, err: live.failure }, 'mount failed to start');
        });
      }
    }
  }

  /** Tears every backend down (seal, shutdown). */
  async unload(): Promise<void> {
    const all = [...this.mounts.values()];
    this.mounts.clear();
    await Promise.all(all.map((live) => this.stop(live)));
  }

  /** Longest-prefix match of a request path; returns the mount and the path relative to it. */
  resolve(path: string): { mount: LiveMount; relative: string } | undefined {
    let best: LiveMount | undefined;
    for (const live of this.mounts.values()) {
      const prefix = live.routePrefix;
      // The prefix, or the mount's own path without its slash (compared without making that string).
      const matches = path.startsWith(prefix) || (path.length === prefix.length - 1 && prefix.startsWith(path));
      if (matches && (!best || prefix.length > best.routePrefix.length)) best = live;
    }
    if (!best) return undefined;
    return { mount: best, relative: path.slice(best.routePrefix.length) };
  }

  /** Every live mount, sorted by route prefix. */
  allLive(): LiveMount[] {
    return [...this.mounts.values()].sort((a, b) => a.routePrefix.localeCompare(b.routePrefix));
  }

  entries(table: MountTableName): MountEntry[] {
    return [...this.mounts.values()]
      .filter((m) => m.entry.table === table)
      .map((m) => m.entry)
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  live(table: MountTableName, path: string): LiveMount {
    const live = this.mounts.get(routePrefixOf({ table, path: normalizeMountPath(path) }));
    if (!live) throw new BadRequestError(`no mount at "${normalizeMountPath(path)}"`);
    return live;
  }

  /**
   * Registers a built-in entry (sys/, token/, identity/) once; it keeps its UUID and accessor across
   * restarts. A host-provided backend serves it (sys/ is routed by the host directly and has none).
   */
  async ensureBuiltin(table: MountTableName, path: string, type: string, description: string, backend?: Backend): Promise<void> {
    await this.serialize(async () => {
      const prefix = routePrefixOf({ table, path });
      let live = this.mounts.get(prefix);
      if (!live) {
        const entry = this.newEntry(table, path, { type, description }, true);
        live = new LiveMount(entry, new StorageView(this.deps.storage, storagePrefixOf(entry)));
        this.mounts.set(prefix, live);
        await this.persist(table);
      }
      live.backend = backend;
    });
  }

  async enable(table: MountTableName, rawPath: string, input: EnableInput): Promise<MountEntry> {
    return this.serialize(async () => {
      const path = normalizeMountPath(rawPath);
      this.checkPathFree(table, path);
      const resolved = await this.catalog.resolve(table, input.type, input.plugin_version ?? '');
      const entry = this.newEntry(table, path, input, false);
      // As in Vault: an explicit version is kept; a version chosen because it is the only one registered is pinned.
      entry.plugin_version = input.plugin_version || !resolved.builtin ? resolved.version : '';
      const live = new LiveMount(entry, new StorageView(this.deps.storage, storagePrefixOf(entry)));
      await this.start(live);
      this.mounts.set(live.routePrefix, live);
      try {
        await this.persist(table);
      } catch (err) {
        this.mounts.delete(live.routePrefix);
        await this.stop(live);
        throw err;
      }
      this.deps.logger.info({ mount: live.routePrefix, type: entry.type }, 'mount enabled');
      return entry;
    });
  }

  async disable(table: MountTableName, rawPath: string): Promise<void> {
    await this.serialize(async () => {
      const path = normalizeMountPath(rawPath);
      const prefix = routePrefixOf({ table, path });
      const live = this.mounts.get(prefix);
      if (!live) return; // Disabling what is not there is a no-op, as in Vault.
      if (live.entry.builtin) throw new BadRequestError(`cannot disable the built-in mount "${prefix}"`);
      this.mounts.delete(prefix);
      try {
        await this.persist(table);
      } catch (err) {
        // Still in the stored table, so still mounted.
        this.mounts.set(prefix, live);
        throw err;
      }
      await this.stop(live);
      await this.deps.onDisable?.(live.entry, prefix);
      await deletePrefix(this.deps.storage, storagePrefixOf(live.entry));
      this.deps.logger.info({ mount: prefix, type: live.entry.type }, 'mount disabled');
    });
  }

  /**
   * Moves a mount to another path of its own table (sys/remount). The entry keeps its UUID — and so
   * its storage — its accessor and its config; only the path changes. A backend built for the new
   * path takes over at once, and the old one is cleaned up when the requests inside it have ended.
   * @throws BadRequestError for no mount at `rawFrom`, a built-in mount, or a reserved target.
   * @throws ConflictError when the target is in use, or inside or around another mount (the moved
   *   one included: a mount cannot move under itself).
   */
  async remount(table: MountTableName, rawFrom: string, rawTo: string): Promise<MountEntry> {
    return this.serialize(async () => {
      const fromPrefix = routePrefixOf({ table, path: normalizeMountPath(rawFrom) });
      const live = this.mounts.get(fromPrefix);
      if (!live) throw new BadRequestError(`no mount at "${fromPrefix}"`);
      if (live.entry.builtin) throw new BadRequestError(`cannot move the built-in mount "${fromPrefix}"`);
      const to = normalizeMountPath(rawTo);
      this.checkPathFree(table, to);
      const moved = new LiveMount({ ...live.entry, path: to }, live.storage);
      await this.start(moved);
      this.mounts.delete(fromPrefix);
      this.mounts.set(moved.routePrefix, moved);
      try {
        await this.persist(table);
      } catch (err) {
        // Still at the old path in the stored table, so still mounted there.
        this.mounts.delete(moved.routePrefix);
        this.mounts.set(fromPrefix, live);
        await this.stop(moved);
        throw err;
      }
      await this.stop(live);
      await this.deps.onRemount?.(moved.entry, fromPrefix, moved.routePrefix);
      this.deps.logger.info({ from: fromPrefix, to: moved.routePrefix, type: moved.entry.type }, 'mount moved');
      return moved.entry;
    });
  }

  /**
   * Changes a mount's settings. A plugin reads its options when its backend is built, so a change
   * of options builds a fresh backend with them (kv's upgrade to version 2 runs then) before the
   * table is saved: options the plugin cannot start with are refused and nothing changes.
   */
  async tune(table: MountTableName, rawPath: string, change: (entry: MountEntry) => void): Promise<void> {
    await this.serialize(async () => {
      const live = this.live(table, rawPath);
      const before = structuredClone(live.entry);
      change(live.entry);
      let fresh: Awaited<ReturnType<MountTable['build']>> | undefined;
      try {
        if (!live.entry.builtin && !sameOptions(before.options, live.entry.options)) fresh = await this.build(live);
        await this.persist(table);
      } catch (err) {
        live.entry = before;
        if (fresh) await this.cleanup(fresh.backend, fresh.container, live.routePrefix);
        throw err;
      }
      if (fresh) {
        const old = { backend: live.backend, container: live.container };
        await live.swap(fresh.backend, fresh.container, fresh.running);
        live.logger = fresh.logger;
        await this.cleanup(old.backend, old.container, live.routePrefix);
        this.deps.logger.info({ mount: live.routePrefix, type: live.entry.type }, 'mount rebuilt with new options');
      }
    });
  }

  /**
   * Builds a fresh backend for each mount from storage, swaps it in, waits for requests on the
   * old one to finish, then cleans the old one up. All in-memory state of the old backend is gone.
   */
  async reload(targets: readonly LiveMount[]): Promise<void> {
    await this.serialize(async () => {
      for (const live of targets) {
        if (live.entry.builtin) continue;
        const old = { backend: live.backend, container: live.container };
        const fresh = await this.build(live);
        await live.swap(fresh.backend, fresh.container, fresh.running);
        live.logger = fresh.logger;
        await this.cleanup(old.backend, old.container, live.routePrefix);
        this.deps.logger.info({ mount: live.routePrefix, type: live.entry.type }, 'mount reloaded');
      }
    });
  }

  /**
   * Re-reads both tables (another node of an HA cluster changed them) and brings the live mounts in
   * line: new entries are built, removed ones torn down, a path mounted anew (another UUID)
   * replaced, and changed settings (tune) taken over in place.
   */
  async sync(): Promise<void> {
    await this.serialize(async () => {
      const seen = new Set<string>();
      for (const table of ['secret', 'auth'] as const) {
        for (const entry of await this.readTable(table)) {
          const prefix = routePrefixOf(entry);
          seen.add(prefix);
          const live = this.mounts.get(prefix);
          if (live && live.entry.uuid === entry.uuid) {
            const rebuild = !entry.builtin && !sameOptions(live.entry.options, entry.options);
            live.entry = entry;
            // Tuned options on another node: its backend was rebuilt with them, so this one is too.
            if (rebuild) {
              const old = { backend: live.backend, container: live.container };
              const fresh = await this.build(live);
              await live.swap(fresh.backend, fresh.container, fresh.running);
              live.logger = fresh.logger;
              await this.cleanup(old.backend, old.container, live.routePrefix);
            }
            continue;
          }
          if (live) {
            this.mounts.delete(prefix);
            await this.stop(live);
          }
          const fresh = new LiveMount(entry, new StorageView(this.deps.storage, storagePrefixOf(entry)));
          if (!entry.builtin) {
            await this.start(fresh).catch((err: unknown) => {
              fresh.failure = errorMessage(err);
              this.deps.logger.error({ mount: fresh.routePrefix, type: entry.type, err: fresh.failure }, 'mount failed to start');
            });
          }
          this.mounts.set(prefix, fresh);
        }
      }
      for (const [prefix, live] of [...this.mounts]) {
        if (seen.has(prefix) || live.entry.builtin) continue;
        this.mounts.delete(prefix);
        await this.stop(live);
      }
    });
  }

  /** Every mount that has a plugin backend (not the built-in ones). */
  allMounts(): LiveMount[] {
    return [...this.mounts.values()].filter((m) => !m.entry.builtin);
  }

  /** The mount whose storage lives under `uuid`. */
  byUuid(uuid: string): LiveMount | undefined {
    for (const live of this.mounts.values()) if (live.entry.uuid === uuid) return live;
    return undefined;
  }

  /** The mount with an accessor (token renewal finds the auth method that issued a token). */
  byAccessor(accessor: string): LiveMount | undefined {
    return [...this.mounts.values()].find((m) => m.entry.accessor === accessor);
  }

  /** Every mount of a plugin type, for reload by plugin name. */
  byType(type: string): LiveMount[] {
    return [...this.mounts.values()].filter((m) => m.entry.type === type && !m.entry.builtin);
  }

  /** Runs every backend's periodic hook; one failing backend does not stop the others. */
  async runPeriodic(): Promise<void> {
    for (const live of [...this.mounts.values()]) {
      if (!live.backend?.periodic || live.entry.builtin) continue;
      let held: { release: () => void } | undefined;
      try {
        const acquired = live.acquire();
        held = acquired;
        await acquired.backend.periodic!();
      } catch (err) {
        this.deps.logger.warn({ mount: live.routePrefix, err: errorMessage(err) }, 'periodic function failed');
      } finally {
        held?.release();
      }
    }
  }

  systemViewFor(live: LiveMount): SystemView {
    const defaults = this.deps.defaults;
    return {
      defaultLeaseTtl: () => live.entry.config.default_lease_ttl || defaults.defaultLeaseTtl,
      maxLeaseTtl: () => live.entry.config.max_lease_ttl || defaults.maxLeaseTtl,
    };
  }

  private async start(live: LiveMount): Promise<void> {
    const built = await this.build(live);
    live.backend = built.backend;
    live.container = built.container;
    live.running = built.running;
    live.logger = built.logger;
    live.failure = undefined;
  }

  private async build(live: LiveMount): Promise<{ backend: Backend; container: DependencyContainer; running: LiveMount['running']; logger: Logger | undefined }> {
    const resolved = await this.catalog.resolve(live.entry.table, live.entry.type, live.entry.plugin_version);
    if (!resolved.builtin) return this.buildIsolated(live, resolved);
    const manifest = resolved.manifest;
    const container = this.deps.root.createChildContainer();
    const logger = this.deps.logger.child({ mount: live.routePrefix });
    if (live.logLevel) logger.level = live.logLevel;
    registerValue(container, TOKENS.MountContext, live.entry);
    registerValue(container, TOKENS.MountStorage, live.storage);
    registerValue(container, TOKENS.Logger, logger);
    registerValue(container, TOKENS.SystemView, this.systemViewFor(live));
    try {
      const backend = await this.deps.registry.build(manifest, {
        container,
        mount: structuredClone(live.entry),
        storage: live.storage,
        logger,
        clock: this.deps.clock,
        system: this.systemViewFor(live),
      });
      return { backend, container, running: { version: resolved.version, sha256: '' }, logger };
    } catch (err) {
      await container.dispose();
      throw err;
    }
  }

  /** An external plugin: its backend runs in a process of its own; the mount's container holds nothing of it. */
  private async buildIsolated(
    live: LiveMount,
    resolved: Extract<ResolvedPlugin, { builtin: false }>,
  ): Promise<{ backend: Backend; container: DependencyContainer; running: LiveMount['running']; logger: Logger }> {
    const view = this.systemViewFor(live);
    const logger = this.deps.logger.child({ mount: live.routePrefix, plugin: resolved.entry.name });
    if (live.logLevel) logger.level = live.logLevel;
    const backend = await IsolatedBackend.start({
      entry: resolved.entry,
      directory: this.catalog.directory,
      mount: () => live.entry,
      storage: live.storage,
      logger,
      system: () => ({ defaultLeaseTtl: view.defaultLeaseTtl(), maxLeaseTtl: view.maxLeaseTtl() }),
      limits: this.deps.isolation ?? DEFAULT_ISOLATION_LIMITS,
      ...(this.deps.root.isRegistered(TOKENS.CloudAuthConfig, true) ? { cloudAuth: this.deps.root.resolve<CloudAuthConfig>(TOKENS.CloudAuthConfig) } : {}),
    });
    return { backend, container: this.deps.root.createChildContainer(), running: { version: resolved.version, sha256: resolved.entry.sha256 }, logger };
  }

  /** Checks that `version` of the mount's plugin is in the catalog (a tune asks for it; a reload runs it). */
  async checkPluginVersion(table: MountTableName, type: string, version: string): Promise<string> {
    return (await this.catalog.resolve(table, type, version)).version;
  }

  private async stop(live: LiveMount): Promise<void> {
    if (live.entry.builtin) return;
    await live.waitIdle();
    await this.cleanup(live.backend, live.container, live.routePrefix);
    live.backend = undefined;
    live.container = undefined;
    live.running = undefined;
  }

  private async cleanup(backend: Backend | undefined, container: DependencyContainer | undefined, prefix: string): Promise<void> {
    try {
      await backend?.cleanup?.();
    } catch (err) {
      this.deps.logger.warn({ mount: prefix, err: errorMessage(err) }, 'backend cleanup failed');
    }
    await container?.dispose();
  }

  private checkPathFree(table: MountTableName, path: string): void {
    const prefix = routePrefixOf({ table, path });
    if (table === 'secret') {
      for (const reserved of RESERVED_SECRET_PREFIXES) {
        if (prefix.startsWith(reserved)) throw new BadRequestError(`cannot mount under "${reserved}": the path is reserved`);
      }
    }
    for (const existing of this.mounts.keys()) {
      if (existing === prefix) throw new ConflictError(`path is already in use at ${prefix}`);
      if (existing.startsWith(prefix) || prefix.startsWith(existing)) {
        throw new ConflictError(`cannot mount at "${prefix}": existing mount at ${existing}`);
      }
    }
  }

  private newEntry(table: MountTableName, path: string, input: EnableInput, builtin: boolean): MountEntry {
    const accessorType = table === 'auth' ? `auth_${input.type}` : input.type;
    return {
      table,
      path,
      type: input.type,
      description: input.description ?? '',
      uuid: randomUUID(),
      accessor: `${accessorType}_${randomBytes(4).toString('hex')}`,
      local: input.local ?? false,
      seal_wrap: input.seal_wrap ?? false,
      external_entropy_access: input.external_entropy_access ?? false,
      options: input.options ?? null,
      config: { ...defaultMountConfig(), ...(input.config ?? {}) },
      plugin_version: input.plugin_version ?? '',
      ...(builtin ? { builtin: true } : {}),
    };
  }

  private async readTable(table: MountTableName): Promise<MountEntry[]> {
    const raw = await this.deps.storage.get(MOUNT_TABLE_KEYS[table]);
    if (!raw) return [];
    const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { entries: MountEntry[] };
    return parsed.entries.map((e) => ({ ...e, table, config: { ...defaultMountConfig(), ...e.config } }));
  }

  private async persist(table: MountTableName): Promise<void> {
    const entries = this.entries(table);
    await this.deps.storage.put(MOUNT_TABLE_KEYS[table], Buffer.from(JSON.stringify({ entries }), 'utf8'));
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.mutation.then(work, work);
    this.mutation = run.catch(() => undefined);
    return run;
  }
}

/** `a/b`, `/a/b/`, `a/b/` → `a/b/`; refuses empty, relative and odd segments. */
export function normalizeMountPath(raw: string): string {
  const trimmed = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') throw new BadRequestError('mount path must not be empty');
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.' || segment === '..' || !/^[\w.-]+$/.test(segment)) {
      throw new BadRequestError(`invalid mount path "${raw}": segments may hold letters, digits, "_", "-" and "."`);
    }
  }
  return `${trimmed}/`;
}

/** Whether two mounts' options are the same settings (null and {} alike, in any key order). */
function sameOptions(a: Readonly<Record<string, string>> | null, b: Readonly<Record<string, string>> | null): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((k) => Object.hasOwn(right, k) && left[k] === right[k]);
}
