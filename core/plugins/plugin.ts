/**
 * The contract between the host and a plugin. A plugin module's default export is a
 * `PluginManifest`; the host checks it before use and calls `factory` once per mount (and again
 * on every reload) with that mount's context.
 */
import type { Logger } from 'pino';
import type { DependencyContainer } from '../di/container.js';
import type { Backend } from '../framework/backend.js';
import type { Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';
import type { MountEntry } from '../mounts/mount-entry.js';

export type PluginKind = 'secret' | 'auth';

/** What the host tells a backend about the system it runs in. */
export interface SystemView {
  /** The mount's default lease TTL in seconds, or the system default when the mount sets none. */
  defaultLeaseTtl(): number;
  /** The mount's max lease TTL in seconds, or the system maximum. */
  maxLeaseTtl(): number;
}

export interface PluginContext {
  /** The mount's child container: resolve global services from it, register per-mount ones in it. */
  readonly container: DependencyContainer;
  /** A snapshot of the mount entry (path, uuid, accessor, config, options). */
  readonly mount: Readonly<MountEntry>;
  /** The mount's own storage view: every key lives under the mount's UUID. */
  readonly storage: Storage;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly system: SystemView;
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
