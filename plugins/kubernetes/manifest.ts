/**
 * The kubernetes plugin's manifest without its factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const KUBERNETES_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'kubernetes',
  kind: 'auth',
  version: '0.1.0',
  description: 'Kubernetes service account login, checked by the API server\'s TokenReview.',
};
