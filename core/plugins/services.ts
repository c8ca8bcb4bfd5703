/**
 * The services a plugin may have, and the one list that registers them: the host calls
 * `pluginServicesContainer` once per server and the isolated plugin's process once for its mount,
 * so a plugin finds the same tokens wherever it runs. That container is a root of its own, not a
 * child of the host's: nothing the host keeps for itself (the barrier, physical storage, the
 * registry) is reachable from a plugin's container, whatever symbol it asks for.
 */
import { createRootContainer, registerValue, type DependencyContainer } from '../di/container.js';
import { token, type ServiceOf, type Token } from '../di/tokens.js';
import type { WasmCrypto } from '../../wasm/index.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * The part of the server's metrics a plugin records into: one crypto operation request by
 * operation and key type, with its number of items (`keywarden_transit_operations_total`,
 * `keywarden_transit_batch_items`).
 */
export type OperationMetrics = Pick<Metrics, 'transit'>;

/**
 * The host services a plugin may resolve, by these tokens (`context.services.get(SERVICES.WasmCrypto)`):
 *
 * - `WasmCrypto`: the loaded WASM crypto core, registered by every server, for a plugin in-process
 *   and isolated alike (an isolated plugin's process loads its own);
 * - `Metrics`: where a plugin counts its operations for `sys/metrics`, registered only while the
 *   server collects metrics, and never for an isolated plugin, whose counts would stay in its own
 *   process (check with `context.services.has`).
 */
export const SERVICES = {
  WasmCrypto: token<WasmCrypto>('WasmCrypto'),
  Metrics: token<OperationMetrics>('Metrics'),
} as const;

/** A value for each service a side offers; one it does not offer is left out. */
export type PluginServiceValues = { readonly [K in keyof typeof SERVICES]?: ServiceOf<(typeof SERVICES)[K]> };

/** The container every plugin container of a server (or of an isolated process) is a child of. */
export function pluginServicesContainer(values: PluginServiceValues): DependencyContainer {
  const container = createRootContainer();
  for (const name of Object.keys(SERVICES) as (keyof typeof SERVICES)[]) {
    const value = values[name];
    if (value !== undefined) registerValue(container, SERVICES[name] as Token<typeof value>, value);
  }
  return container;
}

/** A plugin's typed view of its container. */
export interface PluginServices {
  /** The service a token names. @throws Error when this server does not offer it (see `has`). */
  get<T>(token: Token<T>): T;
  /** Whether this server offers the service (Metrics only while metrics are collected). */
  has(token: Token<unknown>): boolean;
  /** The mount's own child container, where a plugin may register per-mount services of its own. */
  readonly container: DependencyContainer;
}

export function pluginServices(container: DependencyContainer): PluginServices {
  return Object.freeze({
    get: <T>(t: Token<T>): T => container.resolve<T>(t),
    has: (t: Token<unknown>): boolean => container.isRegistered(t, true),
    container,
  });
}
