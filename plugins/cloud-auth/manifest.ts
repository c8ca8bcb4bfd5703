/**
 * The cloud-auth plugin's manifests without their factory: what the server registers at start-up,
 * before the plugin's module is imported by its first mount (core/plugins/builtin.ts). backend.ts
 * adds the factory.
 */
import type { PluginManifest } from '../../sdk/index.js';

export const CLOUD_PLUGIN: Omit<PluginManifest, 'factory'> = {
  name: 'cloud',
  kind: 'auth',
  version: '0.1.0',
  description: 'Cloud-identity login: iam (signed GetCallerIdentity) and ec2 (signed instance identity documents).',
};

/**
 * The same method under Vault's type name: Vault scripts and Terraform enable `aws` auth mounts, and
 * a mount keeps the type it was enabled with, so reading it back shows no drift.
 */
export const AWS_PLUGIN: Omit<PluginManifest, 'factory'> = {
  ...CLOUD_PLUGIN,
  name: 'aws',
  description: 'The cloud auth method under Vault\'s type name "aws" (same paths, fields and logins).',
};
