/**
 * The jwt plugin's manifests without their factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const JWT_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'jwt',
  kind: 'auth',
  version: '0.1.0',
  description: 'JWT and OIDC login: tokens verified with configured keys, JWKS or OIDC discovery; the OIDC authorization-code flow.',
};

/** The same method under Vault's other type name: Vault mounts it as `oidc` for people signing in. */
export const OIDC_PLUGIN: Omit<PluginManifest, 'factory'> = {
  ...JWT_PLUGIN,
  name: 'oidc',
  description: 'The JWT/OIDC auth method under the type name "oidc" (same paths, fields and logins).',
};
