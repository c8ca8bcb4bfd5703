/**
 * The userpass plugin's manifest without its factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const USERPASS_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'userpass',
  kind: 'auth',
  version: '0.1.0',
  description: 'Username and password login, passwords kept as bcrypt hashes.',
};
