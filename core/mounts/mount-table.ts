/**
 * The mount tables' operations — enable, disable, tune, remount, reload, and following another
 * node's changes — each run one at a time, over three parts: the stored entries (mount-entries.ts,
 * copy-on-write), the router (router.ts) and the backend factory (backend-factory.ts). Every change
 * builds what it needs first, stores the new table, and only then changes what serves; a change
 * that fails leaves everything as it was, with nothing to roll back. Each live mount replaces,
 * drains and cleans up its own backend (live-mount.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, errorMessage } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { SystemView } from '../plugins/plugin.js';
import { SerialQueue } from '../seal/serial.js';
import { StorageView, deletePrefix } from '../../storage/view.js';
import { BackendFactory, type BackendFactoryDeps } from './backend-factory.js';
import { LiveMount } from './live-mount.js';
import { MountEntries, MOUNT_TABLES } from './mount-entries.js';
import { defaultMountConfig, normalizeMountPath, routePrefixOf, sameOptions, storagePrefixOf, type MountConfig, type MountEntry, type MountTableName } from './mount-entry.js';
import { reconcile } from './reconcile.js';
import { MountRouter, type Routed } from './router.js';

export { MOUNT_TABLE_KEYS } from './mount-entries.js';
export { LiveMount } from './live-mount.js';
export type { SystemDefaults } from './backend-factory.js';

/** Paths a secrets engine may not be mounted at or under: they belong to the host. */
const RESERVED_SECRET_PREFIXES = ['sys/', 'auth/', 'audit/', 'cubbyhole/', 'identity/'];

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

export interface MountTableDeps extends BackendFactoryDeps {
  /**
   * Called while a mount still serves, before it is disabled or moved: the host revokes the leases
   * of its secrets through it, as Vault does. A failure leaves the mount as it was.
   */
  readonly beforeLeaving?: (entry: MountEntry, routePrefix: string) => Promise<void>;
  /** Called after a mount left the table and before its storage is deleted (the host revokes its tokens). */
  readonly onDisable?: (entry: MountEntry, routePrefix: string) => Promise<void>;
  /** Called once a moved mount is stored at its new path (the host moves its tokens' paths along). */
  readonly onRemount?: (entry: MountEntry, fromPrefix: string, toPrefix: string) => Promise<void>;
}

export class MountTable {
  private readonly stored: MountEntries;
  private readonly router = new MountRouter();
  private readonly factory: BackendFactory;
  private readonly changes = new SerialQueue();

  constructor(private readonly deps: MountTableDeps) {
    this.stored = new MountEntries(deps.storage);
    this.factory = new BackendFactory(deps);
  }

  /** Reads both tables and builds every backend; a plugin that fails is logged and its mount marked failed. */
  async load(): Promise<void> {
    this.stored.adopt(await this.stored.read());
    for (const table of MOUNT_TABLES) for (const entry of this.stored.list(table)) await this.serve(entry);
  }

  /** Tears every backend down (seal, shutdown). */
  async unload(): Promise<void> {
    const all = this.router.all();
    this.router.clear();
    this.stored.clear();
    await Promise.all(all.map((live) => this.stop(live)));
  }

  /** Longest-prefix match of a request path; returns the mount and the path relative to it. */
  resolve(path: string): Routed | undefined {
    return this.router.resolve(path);
  }

  /** Every live mount, sorted by route prefix. */
  allLive(): LiveMount[] {
    return [...this.router.all()].sort((a, b) => a.routePrefix.localeCompare(b.routePrefix));
  }

  /** A table's entries, sorted by path. */
  entries(table: MountTableName): readonly MountEntry[] {
    return this.stored.list(table);
  }

  /** @throws BadRequestError when no mount is at `path`. */
  live(table: MountTableName, path: string): LiveMount {
    const normalized = normalizeMountPath(path);
    const live = this.router.get(routePrefixOf({ table, path: normalized }));
    if (!live) throw new BadRequestError(`no mount at "${normalized}"`);
    return live;
  }

  /** Every mount that has a plugin backend (not the built-in ones). */
  allMounts(): LiveMount[] {
    return this.router.all().filter((m) => !m.entry.builtin);
  }

  /** The mount whose storage lives under `uuid`. */
  byUuid(uuid: string): LiveMount | undefined {
    return this.router.all().find((m) => m.entry.uuid === uuid);
  }

  /** The mount with an accessor (token renewal finds the auth method that issued a token). */
  byAccessor(accessor: string): LiveMount | undefined {
    return this.router.all().find((m) => m.entry.accessor === accessor);
  }

  /** Every mount of a plugin type, for reload by plugin name. */
  byType(type: string): LiveMount[] {
    return this.router.all().filter((m) => m.entry.type === type && !m.entry.builtin);
  }

  systemViewFor(live: LiveMount): SystemView {
    return this.factory.systemView(live);
  }

  /** Checks that `version` of the mount's plugin is in the catalog (a tune asks for it; a reload runs it). */
  async checkPluginVersion(table: MountTableName, type: string, version: string): Promise<string> {
    return (await this.factory.resolve(table, type, version)).version;
  }

  /**
   * Registers a built-in entry (sys/, token/, identity/) once; it keeps its UUID and accessor across
   * restarts. A host-provided backend serves it (sys/ is routed by the host directly and has none).
   */
  async ensureBuiltin(table: MountTableName, path: string, type: string, description: string, backend?: Backend): Promise<void> {
    await this.changes.run(async () => {
      let live = this.router.get(routePrefixOf({ table, path }));
      if (!live) {
        const entry = newEntry(table, path, { type, description }, true);
        await this.stored.change(table, (entries) => [...entries, entry]);
        live = this.mount(entry);
      }
      if (backend) await live.replace({ backend, running: undefined, logger: undefined, close: async () => {} });
    });
  }

  async enable(table: MountTableName, rawPath: string, input: EnableInput): Promise<MountEntry> {
    return this.changes.run(async () => {
      const path = normalizeMountPath(rawPath);
      this.checkPathFree(table, path);
      const resolved = await this.factory.resolve(table, input.type, input.plugin_version ?? '');
      // As in Vault: an explicit version is kept; a version chosen because it is the only one registered is pinned.
      const entry = newEntry(table, path, { ...input, plugin_version: input.plugin_version || !resolved.builtin ? resolved.version : '' }, false);
      const live = new LiveMount(entry, viewOf(this.deps.storage, entry));
      const built = await this.factory.build(entry, live, resolved);
      await this.storeOrClose(built, () => this.stored.change(table, (entries) => [...entries, entry]));
      await live.replace(built);
      this.router.set(live);
      this.deps.logger.info({ mount: live.routePrefix, type: entry.type }, 'mount enabled');
      return entry;
    });
  }

  async disable(table: MountTableName, rawPath: string): Promise<void> {
    await this.changes.run(async () => {
      const prefix = routePrefixOf({ table, path: normalizeMountPath(rawPath) });
      const live = this.router.get(prefix);
      if (!live) return; // Disabling what is not there is a no-op, as in Vault.
      if (live.entry.builtin) throw new BadRequestError(`cannot disable the built-in mount "${prefix}"`);
      await this.deps.beforeLeaving?.(live.entry, prefix);
      const { uuid } = live.entry;
      await this.stored.change(table, (entries) => entries.filter((e) => e.uuid !== uuid));
      this.router.delete(prefix);
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
    return this.changes.run(async () => {
      const fromPrefix = routePrefixOf({ table, path: normalizeMountPath(rawFrom) });
      const live = this.router.get(fromPrefix);
      if (!live) throw new BadRequestError(`no mount at "${fromPrefix}"`);
      if (live.entry.builtin) throw new BadRequestError(`cannot move the built-in mount "${fromPrefix}"`);
      const to = normalizeMountPath(rawTo);
      this.checkPathFree(table, to);
      await this.deps.beforeLeaving?.(live.entry, fromPrefix);
      const entry: MountEntry = { ...live.entry, path: to };
      const moved = new LiveMount(entry, live.storage);
      const built = await this.factory.build(entry, moved);
      await this.storeOrClose(built, () => this.stored.change(table, (entries) => entries.map((e) => (e.uuid === entry.uuid ? entry : e))));
      await moved.replace(built);
      this.router.delete(fromPrefix);
      this.router.set(moved);
      await this.stop(live);
      await this.deps.onRemount?.(entry, fromPrefix, moved.routePrefix);
      this.deps.logger.info({ from: fromPrefix, to: moved.routePrefix, type: entry.type }, 'mount moved');
      return entry;
    });
  }

  /**
   * Changes a mount's settings: `change` makes the new entry from the current one. A plugin reads its
   * options when its backend is built, so a change of options builds a fresh backend with them (kv's
   * upgrade to version 2 runs then) before the table is saved: options the plugin cannot start with
   * are refused and nothing changes.
   */
  async tune(table: MountTableName, rawPath: string, change: (entry: MountEntry) => MountEntry): Promise<void> {
    await this.changes.run(async () => {
      const live = this.live(table, rawPath);
      const entry = Object.freeze(change(live.entry));
      const fresh = !entry.builtin && !sameOptions(live.entry.options, entry.options) ? await this.factory.build(entry, live) : undefined;
      await this.storeOrClose(fresh, () => this.stored.change(table, (entries) => entries.map((e) => (e.uuid === entry.uuid ? entry : e))));
      live.entry = entry;
      if (fresh) {
        await live.replace(fresh);
        this.deps.logger.info({ mount: live.routePrefix, type: entry.type }, 'mount rebuilt with new options');
      }
    });
  }

  /**
   * Builds a fresh backend for each mount from storage, swaps it in, waits for requests on the
   * old one to finish, then cleans the old one up. All in-memory state of the old backend is gone.
   * A backend that fails to build leaves the old one serving.
   */
  async reload(targets: readonly LiveMount[]): Promise<void> {
    await this.changes.run(async () => {
      for (const live of targets) {
        if (live.entry.builtin) continue;
        await live.replace(await this.factory.build(live.entry, live));
        this.deps.logger.info({ mount: live.routePrefix, type: live.entry.type }, 'mount reloaded');
      }
    });
  }

  /**
   * Re-reads both tables (another node of an HA cluster changed them) and brings the live mounts in
   * line (reconcile.ts): new entries are built, removed ones torn down, a path mounted anew (another
   * UUID) replaced, and changed settings (tune) taken over, with a rebuilt backend when the options
   * changed, as that node rebuilt its own.
   */
  async sync(): Promise<void> {
    await this.changes.run(async () => {
      const tables = await this.stored.read();
      const plan = reconcile(this.router.all(), [...tables.secret, ...tables.auth]);
      this.stored.adopt(tables);
      for (const live of plan.stop) {
        if (this.router.get(live.routePrefix) === live) this.router.delete(live.routePrefix);
        await this.stop(live);
      }
      for (const { mount, entry, rebuild } of plan.retune) {
        mount.entry = entry;
        if (rebuild) await this.start(mount);
      }
      for (const entry of plan.start) await this.serve(entry);
    });
  }

  /** Runs every backend's periodic hook; one failing backend does not stop the others. */
  async runPeriodic(): Promise<void> {
    for (const live of this.router.all()) {
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

  /** Routes a stored entry and, unless it is built in, builds its backend. */
  private async serve(entry: MountEntry): Promise<void> {
    const live = this.mount(entry);
    if (!entry.builtin) await this.start(live);
  }

  private mount(entry: MountEntry): LiveMount {
    const live = new LiveMount(entry, viewOf(this.deps.storage, entry));
    this.router.set(live);
    return live;
  }

  /** Builds and puts in place the mount's backend; a plugin that fails marks the mount failed (logged). */
  private async start(live: LiveMount): Promise<void> {
    try {
      await live.replace(await this.factory.build(live.entry, live));
    } catch (err) {
      live.fail(errorMessage(err));
      this.deps.logger.error({ mount: live.routePrefix, type: live.entry.type, err: live.failure }, 'mount failed to start');
    }
  }

  /** Built-in mounts serve host backends that live as long as the host: nothing to wait for or close. */
  private async stop(live: LiveMount): Promise<void> {
    if (!live.entry.builtin) await live.stop();
  }

  /** Stores a change; a backend built for it is closed when it cannot be stored, since nothing will use it. */
  private async storeOrClose(built: { close(): Promise<void> } | undefined, store: () => Promise<void>): Promise<void> {
    try {
      await store();
    } catch (err) {
      await built?.close();
      throw err;
    }
  }

  private checkPathFree(table: MountTableName, path: string): void {
    const prefix = routePrefixOf({ table, path });
    if (table === 'secret') {
      for (const reserved of RESERVED_SECRET_PREFIXES) {
        if (prefix.startsWith(reserved)) throw new BadRequestError(`cannot mount under "${reserved}": the path is reserved`);
      }
    }
    for (const { routePrefix: existing } of this.router.all()) {
      if (existing === prefix) throw new ConflictError(`path is already in use at ${prefix}`);
      if (existing.startsWith(prefix) || prefix.startsWith(existing)) {
        throw new ConflictError(`cannot mount at "${prefix}": existing mount at ${existing}`);
      }
    }
  }
}

export { normalizeMountPath } from './mount-entry.js';

function viewOf(storage: BackendFactoryDeps['storage'], entry: MountEntry): StorageView {
  return new StorageView(storage, storagePrefixOf(entry));
}

function newEntry(table: MountTableName, path: string, input: EnableInput, builtin: boolean): MountEntry {
  const accessorType = table === 'auth' ? `auth_${input.type}` : input.type;
  return Object.freeze({
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
  });
}
