/**
 * The approle plugin's manifest without its factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const APPROLE_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'approle',
  kind: 'auth',
  version: '0.1.0',
  description: 'AppRole login: a role ID and a secret ID, for machines and applications.',
};
