/**
 * The kv plugin's manifests without their factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const KV_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'kv',
  kind: 'secret',
  version: '0.1.0',
  description: "Vault's key/value secrets engine: plain (version 1) or versioned (version 2).",
};

/**
 * `generic`: the type name Vault's key/value store had before `kv`, which Vault still mounts (as
 * version 1) and older clients and tests still send.
 */
export const GENERIC_PLUGIN: Omit<PluginManifest, 'factory'> = {
  ...KV_PLUGIN,
  name: 'generic',
  description: "The key/value secrets engine under its older type name \"generic\" (kv version 1 unless options.version=2).",
};
