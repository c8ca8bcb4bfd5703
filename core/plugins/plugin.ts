/**
 * The contract between the host and a plugin. A plugin module's default export is a
 * `PluginManifest`; the host checks it before use and calls `factory` once per mount (and again
 * on every reload) with that mount's context, built by one function (./context.ts) wherever the
 * plugin runs: in the server's process or isolated in one of its own.
 */
import type { Logger } from 'pino';
import type { Backend } from '../framework/backend.js';
import type { Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import type { MountEntry } from '../mounts/mount-entry.js';
import type { PluginServices } from './services.js';

export type PluginKind = 'secret' | 'auth';

/** What the host tells a backend about the system it runs in. */
export interface SystemView {
  /** The mount's default lease TTL in seconds, or the system default when the mount sets none. */
  defaultLeaseTtl(): number;
  /** The mount's max lease TTL in seconds, or the system maximum. */
  maxLeaseTtl(): number;
}

/**
 * The plugin's own block of the server's configuration file, `plugin "<name>" { … }`, as plain
 * values (strings, numbers, booleans, lists and nested blocks); empty when the file has none. The
 * plugin reads and checks it when a mount is built, and refuses what it does not understand.
 */
export type PluginConfig = Readonly<Record<string, unknown>>;

export interface PluginContext {
  /** A snapshot of the mount entry (path, uuid, accessor, config, options). */
  readonly mount: Readonly<MountEntry>;
  /** The mount's own storage view: every key lives under the mount's UUID. */
  readonly storage: Storage;
  /** The mount's logger, bound with the mount's path. */
  readonly logger: Logger;
  readonly clock: Clock;
  readonly system: SystemView;
  /** The host services a plugin may have (core/plugins/services.ts), by typed token. */
  readonly services: PluginServices;
  /** The plugin's block of the configuration file. */
  readonly config: PluginConfig;
}

export interface PluginManifest {
  /** The mount `type` this plugin serves (`transit`, `cloud`); lower-case letters, digits, `-`. */
  readonly name: string;
  readonly kind: PluginKind;
  /** Semantic version, reported as the mount's `running_plugin_version`. */
  readonly version: string;
  readonly description: string;
  factory(context: PluginContext): Backend | Promise<Backend>;
}
