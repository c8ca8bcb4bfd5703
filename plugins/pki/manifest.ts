/**
 * The pki plugin's manifest without its factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const PKI_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'pki',
  kind: 'secret',
  version: '0.1.0',
  description: "Vault's PKI secrets engine: a root CA per mount, roles, issue and sign, revocation and the CRL.",
};
