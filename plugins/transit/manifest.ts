/**
 * The transit plugin's manifest without its factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const TRANSIT_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'transit',
  kind: 'secret',
  version: '0.1.0',
  description: 'Cryptography as a service: encrypt, decrypt, sign, verify, HMAC and more with named keys.',
};
