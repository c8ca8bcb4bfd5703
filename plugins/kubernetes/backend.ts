/**
 * The Kubernetes auth method (mount type `kubernetes`): a workload logs in with its service
 * account token, which the cluster's API server reviews. This file wires one mount.
 */
import { FrameworkBackend, timeoutFromEnv, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { KUBERNETES_PLUGIN } from './manifest.js';
import type { KubernetesAuthContext } from './context.js';
import { POD_SERVICE_ACCOUNT_DIR, PodServiceAccount } from './pod-files.js';
import { configPath } from './paths/config.js';
import { rolePaths } from './paths/role.js';
import { loginPath } from './paths/login.js';
import { renewLogin } from './renew.js';

/** One call to the API server may take this long unless KUBERNETES_API_TIMEOUT says otherwise. */
export const DEFAULT_API_TIMEOUT_MS = 10_000;

export interface KubernetesAuthOptions {
  /** Where KUBERNETES_API_TIMEOUT is read. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the pod's service account token and CA are read (request-level tests). */
  readonly serviceAccountDir?: string;
}

export function createKubernetesBackend(plugin: PluginContext, options: KubernetesAuthOptions = {}): FrameworkBackend {
  const ctx: KubernetesAuthContext = {
    storage: plugin.storage,
    clock: plugin.clock,
    logger: plugin.logger,
    system: plugin.system,
    pod: new PodServiceAccount(options.serviceAccountDir ?? POD_SERVICE_ACCOUNT_DIR, plugin.clock, plugin.logger),
    timeoutMs: timeoutFromEnv(options.env ?? process.env, 'KUBERNETES_API_TIMEOUT', DEFAULT_API_TIMEOUT_MS),
  };
  return new FrameworkBackend({
    description: 'Log in with a Kubernetes service account token, reviewed by the cluster\'s API server.',
    paths: [configPath(ctx), ...rolePaths(ctx), loginPath(ctx)],
    renew: (_req, auth) => renewLogin(plugin.storage, auth),
  });
}

export const kubernetesAuthPlugin: PluginManifest = { ...KUBERNETES_PLUGIN, factory: (context) => createKubernetesBackend(context) };
