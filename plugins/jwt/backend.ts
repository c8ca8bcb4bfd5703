/**
 * The JWT/OIDC auth method (mount types `jwt` and `oidc`, one backend under either name): a
 * workload logs in with a JWT its platform signed (CI systems, clouds, Kubernetes), a person
 * through their identity provider's OIDC authorization-code flow. This file wires one mount.
 */
import { FrameworkBackend, timeoutFromEnv, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { JWT_PLUGIN, OIDC_PLUGIN } from './manifest.js';
import { ConfiguredKeys, type JwtAuthContext } from './context.js';
import { PendingLogins } from './pending-logins.js';
import { STORAGE_KEYS } from './storage.js';
import { configPath } from './paths/config.js';
import { rolePaths } from './paths/role.js';
import { loginPath } from './paths/login.js';
import { oidcAuthUrlPath } from './paths/oidc-auth-url.js';
import { oidcCallbackPath } from './paths/oidc-callback.js';
import { renewLogin } from './renew.js';

/** One request to the identity provider may take this long unless JWT_PROVIDER_TIMEOUT says otherwise. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 10_000;

export interface JwtAuthOptions {
  /** Where JWT_PROVIDER_TIMEOUT is read. */
  readonly env?: NodeJS.ProcessEnv;
}

export function createJwtBackend(plugin: PluginContext, options: JwtAuthOptions = {}): FrameworkBackend {
  const timeoutMs = timeoutFromEnv(options.env ?? process.env, 'JWT_PROVIDER_TIMEOUT', DEFAULT_PROVIDER_TIMEOUT_MS);
  const ctx: JwtAuthContext = {
    storage: plugin.storage,
    clock: plugin.clock,
    logger: plugin.logger,
    system: plugin.system,
    keys: new ConfiguredKeys(plugin.storage, plugin.clock, timeoutMs),
    pending: new PendingLogins(plugin.clock),
    timeoutMs,
  };
  return new FrameworkBackend({
    description: 'Log in with a JWT (signed by keys the configuration names) or through an OIDC provider.',
    paths: [configPath(ctx), ...rolePaths(ctx), loginPath(ctx), oidcAuthUrlPath(ctx), oidcCallbackPath(ctx)],
    renew: (_req, auth) => renewLogin(plugin.storage, auth),
    // HA: another node wrote the configuration the keys were built from.
    invalidate: (key) => {
      if (key === STORAGE_KEYS.config) ctx.keys.reset();
    },
  });
}

export const jwtAuthPlugin: PluginManifest = { ...JWT_PLUGIN, factory: (context) => createJwtBackend(context) };

/** The same plugin under another type name (manifest.ts says why). */
export const oidcAuthPlugin: PluginManifest = { ...OIDC_PLUGIN, factory: (context) => createJwtBackend(context) };
