/**
 * The one function that builds a plugin's context, called by the host for a plugin in its own
 * process (mounts/backend-factory.ts) and by an isolated plugin's process for its mount
 * (isolation/plugin-main.ts). Each side supplies the parts its own way — the host its barrier
 * view, the process a storage served by the host — and the plugin sees the same shape either way.
 */
import type { Logger } from 'pino';
import type { DependencyContainer } from '../di/container.js';
import type { Clock } from '../clock.js';
import type { MountEntry } from '../mounts/mount-entry.js';
import type { Storage } from '../../storage/storage.js';
import type { PluginConfig, PluginContext, SystemView } from './plugin.js';
import { pluginServices } from './services.js';

export interface PluginContextParts {
  /** The container of the plugin services (services.ts); the mount's container is its child. */
  readonly services: DependencyContainer;
  readonly mount: MountEntry;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly system: SystemView;
  readonly config: PluginConfig;
}

export interface BuiltContext {
  readonly context: PluginContext;
  /** Disposes of the mount's container: when the backend is closed, or failed to build. */
  readonly dispose: () => Promise<void>;
}

export function createPluginContext(parts: PluginContextParts): BuiltContext {
  const container = parts.services.createChildContainer();
  const context: PluginContext = Object.freeze({
    mount: structuredClone(parts.mount),
    storage: parts.storage,
    logger: parts.logger,
    clock: parts.clock,
    system: parts.system,
    services: pluginServices(container),
    config: parts.config,
  });
  return { context, dispose: async () => container.dispose() };
}
