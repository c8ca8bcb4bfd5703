/**
 * The plugin catalog: every plugin a mount may run, by type (`secret`, `auth`), name and version.
 * Built-in plugins (compiled in, or passed by an embedding program) are listed from the registry
 * with the version `v<version>+builtin`; external ones are registered through
 * `sys/plugins/catalog` with a module file in `plugin_directory` and its SHA-256, and kept behind
 * the barrier. Nothing is cached, so every node of a cluster sees the same catalog.
 *
 * A built-in is never replaced behind a mount's back. Vault and OpenBao let an unversioned entry
 * named like a built-in shadow it, so every mount of the built-in runs the external module at its
 * next reload or restart (https://developer.hashicorp.com/vault/docs/plugins/plugin-management;
 * OpenBao's vault/plugin_catalog.go does the same). Here such an entry is refused, and a mount
 * that names no version runs the built-in before any registered version: a mount moves to an
 * external module of a built-in's name only when an operator sets its `plugin_version` to that
 * module's version and reloads it.
 */
import { BadRequestError } from '../errors.js';
import { pluginEnvironment } from './isolation/confinement.js';
import type { Storage } from '../../storage/storage.js';
import type { MountTableName } from '../mounts/mount-entry.js';
import type { PluginManifest } from './plugin.js';
import { pluginFilePath } from './plugin-file.js';
import type { PluginRegistry } from './registry.js';

/** Where external entries live: `core/plugin-catalog/<type>/<name>/<version or UNVERSIONED>`. */
export const PLUGIN_CATALOG_PREFIX = 'core/plugin-catalog/';
/** The key segment of an entry registered without a version (never a valid version itself). */
const UNVERSIONED = 'unversioned';

export const CATALOG_TYPES = ['auth', 'secret'] as const;
export type CatalogType = MountTableName;

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const VERSION = /^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/;

/** An external plugin as registered. */
export interface ExternalEntry {
  readonly type: CatalogType;
  readonly name: string;
  /** `v1.2.3`, or `''` for the single unversioned entry a name may have. */
  readonly version: string;
  /** Hex SHA-256 of the module file. */
  readonly sha256: string;
  /** The module file, relative to plugin_directory. */
  readonly command: string;
  readonly args: readonly string[];
  /** `KEY=value` pairs: the whole environment the plugin's process sees. */
  readonly env: readonly string[];
}

/** What a mount runs: a built-in manifest (in-process) or an external entry (isolated). */
export type ResolvedPlugin =
  | { readonly builtin: true; readonly manifest: PluginManifest; readonly version: string }
  | { readonly builtin: false; readonly entry: ExternalEntry; readonly version: string };

/** `sys/plugins/catalog/:type/:name` as Vault shows one entry. */
export interface CatalogInfo {
  readonly name: string;
  readonly type: CatalogType;
  readonly version: string;
  readonly builtin: boolean;
  readonly sha256: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly deprecation_status?: string;
}

/** `1.2.3` or `v1.2.3` → `v1.2.3`; refuses what is not a semantic version. */
export function canonicalVersion(raw: string): string {
  const m = VERSION.exec(raw);
  if (!m) throw new BadRequestError(`version "${raw}" is not a semantic version such as v1.0.0`);
  return `v${m[1]}`;
}

/** The catalog version of a built-in plugin. */
export function builtinVersion(manifest: PluginManifest): string {
  return `v${manifest.version}+builtin`;
}

export function checkCatalogType(raw: string): CatalogType {
  if (raw === 'secret' || raw === 'auth') return raw;
  if (raw === 'database') throw new BadRequestError('plugin type "database" is not supported: there are no database plugins here');
  throw new BadRequestError(`unknown plugin type "${raw}": must be "auth" or "secret"`);
}

export function checkPluginName(raw: string): string {
  if (!NAME.test(raw)) throw new BadRequestError(`plugin name "${raw}" must be lower-case letters, digits and "-"`);
  return raw;
}

export interface RegisterInput {
  readonly type: CatalogType;
  readonly name: string;
  readonly version?: string;
  readonly sha256: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: readonly string[];
}

export class PluginCatalog {
  constructor(
    private readonly storage: Storage,
    private readonly registry: PluginRegistry,
    /** Undefined when the server has no plugin_directory: only built-ins then. */
    readonly directory: string | undefined,
  ) {}

  /** Adds or replaces an external entry; the module file must exist inside the plugin directory. */
  async register(input: RegisterInput): Promise<void> {
    const name = checkPluginName(input.name);
    const version = input.version ? canonicalVersion(input.version) : '';
    if (version.includes('+builtin')) throw new BadRequestError(`version "${version}" is reserved for built-in plugins`);
    if (version === '' && this.builtin(input.type, name)) {
      throw new BadRequestError(
        `plugin "${name}" is a built-in ${input.type} plugin: register its replacement with a version, then move mounts to it with plugin_version and a reload`,
      );
    }
    if (!/^[0-9a-f]{64}$/i.test(input.sha256)) throw new BadRequestError('sha256 must be the 64 hex digits of the module file\'s SHA-256');
    pluginEnvironment(input.env ?? []);
    await pluginFilePath(this.directory, input.command);
    const entry: ExternalEntry = {
      type: input.type,
      name,
      version,
      sha256: input.sha256.toLowerCase(),
      command: input.command,
      args: [...(input.args ?? [])],
      env: [...(input.env ?? [])],
    };
    await this.storage.put(keyOf(input.type, name, version), Buffer.from(JSON.stringify(entry)));
  }

  /**
   * Removes an external entry; removing what is not there is a no-op, as in Vault. An unversioned
   * entry of a built-in's name (stored before such entries were refused) can be removed; the
   * built-in itself cannot.
   */
  async deregister(type: CatalogType, name: string, version: string): Promise<void> {
    const canonical = version ? canonicalVersion(version) : '';
    const builtin = this.builtin(type, name);
    const isBuiltin = builtin && (canonical === builtinVersion(builtin) || (canonical === '' && !(await this.external(type, name, ''))));
    if (isBuiltin) throw new BadRequestError(`cannot deregister the built-in plugin "${name}"`);
    await this.storage.delete(keyOf(type, name, canonical));
  }

  /** One entry: with a version, that one; without, the built-in of that name, else the unversioned entry. */
  async get(type: CatalogType, name: string, version = ''): Promise<CatalogInfo | undefined> {
    const canonical = version ? canonicalVersion(version) : '';
    const builtin = this.builtin(type, name);
    if (builtin && (canonical === '' || canonical === builtinVersion(builtin))) return builtinInfo(builtin);
    const external = await this.external(type, name, canonical);
    return external ? externalInfo(external) : undefined;
  }

  /** Every entry of a type (both types without one), sorted by name then version. */
  async list(type?: CatalogType): Promise<CatalogInfo[]> {
    const out: CatalogInfo[] = [];
    for (const t of type ? [type] : CATALOG_TYPES) {
      for (const manifest of this.registry.list()) if (manifest.kind === t) out.push(builtinInfo(manifest));
      for (const folder of await this.storage.list(`${PLUGIN_CATALOG_PREFIX}${t}/`)) {
        const name = folder.replace(/\/$/, '');
        for (const version of await this.storage.list(`${PLUGIN_CATALOG_PREFIX}${t}/${name}/`)) {
          const entry = await this.external(t, name, version === UNVERSIONED ? '' : version);
          if (entry) out.push(externalInfo(entry));
        }
      }
    }
    return out.sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  }

  /** Whether a name is known for any type (reload by plugin name). */
  async has(name: string): Promise<boolean> {
    if (this.registry.has(name)) return true;
    for (const t of CATALOG_TYPES) if ((await this.storage.list(`${PLUGIN_CATALOG_PREFIX}${t}/${name}/`)).length > 0) return true;
    return false;
  }

  /**
   * The plugin a mount of `type` runs. With a version, exactly that one (the built-in's version
   * with or without `+builtin`). Without: the built-in (never shadowed, see above), else the
   * unversioned external entry, else the only registered version (which enable then pins on the
   * mount); several versions and no built-in need a choice.
   */
  async resolve(table: CatalogType, type: string, requested: string): Promise<ResolvedPlugin> {
    const builtin = this.builtin(table, type);
    const unknown = () =>
      new BadRequestError(table === 'secret' ? `unknown secrets engine type: ${type}` : `unknown auth method type: ${type}`);
    if (!NAME.test(type)) throw unknown();
    if (requested) {
      const canonical = canonicalVersion(requested);
      if (builtin && (canonical === builtinVersion(builtin) || canonical === `v${builtin.version}`)) {
        return { builtin: true, manifest: builtin, version: builtinVersion(builtin) };
      }
      const entry = await this.external(table, type, canonical);
      if (entry) return { builtin: false, entry, version: entry.version };
      const known = (await this.versionsOf(table, type)).join(', ') || 'none';
      throw new BadRequestError(`plugin_version "${requested}" is not available for type "${type}": registered versions are ${known}`);
    }
    if (builtin) return { builtin: true, manifest: builtin, version: builtinVersion(builtin) };
    const unversioned = await this.external(table, type, '');
    if (unversioned) return { builtin: false, entry: unversioned, version: '' };
    const versions = await this.storage.list(`${PLUGIN_CATALOG_PREFIX}${table}/${type}/`);
    if (versions.length === 1) {
      const entry = await this.external(table, type, versions[0]!);
      if (entry) return { builtin: false, entry, version: entry.version };
    }
    if (versions.length > 1) {
      throw new BadRequestError(`plugin "${type}" has several registered versions (${versions.join(', ')}): choose one with plugin_version`);
    }
    throw unknown();
  }

  private async versionsOf(type: CatalogType, name: string): Promise<string[]> {
    const builtin = this.builtin(type, name);
    const stored = (await this.storage.list(`${PLUGIN_CATALOG_PREFIX}${type}/${name}/`)).map((v) => (v === UNVERSIONED ? '(unversioned)' : v));
    return [...(builtin ? [builtinVersion(builtin)] : []), ...stored];
  }

  private builtin(type: CatalogType, name: string): PluginManifest | undefined {
    if (!this.registry.has(name)) return undefined;
    const manifest = this.registry.list().find((m) => m.name === name);
    return manifest?.kind === type ? manifest : undefined;
  }

  private async external(type: CatalogType, name: string, version: string): Promise<ExternalEntry | undefined> {
    const raw = await this.storage.get(keyOf(type, name, version));
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as ExternalEntry) : undefined;
  }
}

function keyOf(type: CatalogType, name: string, version: string): string {
  return `${PLUGIN_CATALOG_PREFIX}${type}/${name}/${version || UNVERSIONED}`;
}

function builtinInfo(manifest: PluginManifest): CatalogInfo {
  return {
    name: manifest.name,
    type: manifest.kind,
    version: builtinVersion(manifest),
    builtin: true,
    sha256: '',
    command: '',
    args: [],
    deprecation_status: 'supported',
  };
}

function externalInfo(entry: ExternalEntry): CatalogInfo {
  return { name: entry.name, type: entry.type, version: entry.version, builtin: false, sha256: entry.sha256, command: entry.command, args: entry.args };
}
