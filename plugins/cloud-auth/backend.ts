/**
 * The cloud-identity auth method (mount type `cloud`, default path `auth/cloud`): workloads log in
 * by proving who they are through the cloud provider. This file wires the paths, the provider
 * clients, the renewal hook and the periodic tidy for one mount.
 */
import { BadRequestError, CoercionError, FrameworkBackend, parseBool, type AnyPathDefinition, type PluginConfig, type PluginContext, type PluginManifest, KeyedLock, timeoutFromEnv } from '../../sdk/index.js';
import { CLOUD_PLUGIN, AWS_PLUGIN } from './manifest.js';
import { ArnCache, type CloudAuthContext } from './context.js';
import { readClientConfig, readStsRole } from './client-config.js';
import { SdkCloudProvider } from './provider/sdk-provider.js';
import type { CloudProvider } from './provider/types.js';
import { configClientPath } from './paths/config-client.js';
import { configIdentityPath } from './paths/config-identity.js';
import { configCertificatePaths } from './paths/config-certificate.js';
import { configStsPaths } from './paths/config-sts.js';
import { configTidyPaths } from './paths/config-tidy.js';
import { configRotateRootPath } from './paths/config-rotate-root.js';
import { rolePaths } from './paths/role.js';
import { loginPath } from './paths/login.js';
import { roleTagPath } from './paths/role-tag.js';
import { identityAccessListPaths } from './paths/identity-accesslist.js';
import { roleTagDenyListPaths } from './paths/roletag-denylist.js';
import { tidyPaths } from './paths/tidy.js';
import { renewLogin } from './renew.js';

import { Tidier } from './tidy.js';

/** One provider call (and each attempt of a forwarded login) may take this long unless CLOUD_PROVIDER_TIMEOUT says otherwise. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 10_000;

export interface CloudAuthOptions {
  /** Where CLOUD_ACCESS_KEY, CLOUD_SECRET_KEY, CLOUD_REGION, CLOUD_METADATA_ENDPOINT and CLOUD_PROVIDER_TIMEOUT are read. */
  readonly env?: NodeJS.ProcessEnv;
  /** Replaces the SDK-backed provider (request-level tests). */
  readonly provider?: (ctx: Omit<CloudAuthContext, 'provider'>) => CloudProvider;
  /** Overrides the plugin block's `allow_sha1_signatures` (request-level tests). */
  readonly allowSha1Signatures?: boolean;
}

export async function createCloudAuthBackend(plugin: PluginContext, options: CloudAuthOptions = {}): Promise<FrameworkBackend> {
  const env = options.env ?? process.env;
  const base = {
    storage: plugin.storage,
    clock: plugin.clock,
    logger: plugin.logger,
    system: plugin.system,
    arnCache: new ArnCache(plugin.clock),
    timeoutMs: timeoutFromEnv(env, 'CLOUD_PROVIDER_TIMEOUT', DEFAULT_PROVIDER_TIMEOUT_MS),
    allowSha1Signatures: options.allowSha1Signatures ?? readSettings(plugin.config).allowSha1Signatures,
    accessListLocks: new KeyedLock(),
  };
  const provider =
    options.provider?.(base) ??
    new SdkCloudProvider({
      loadConfig: () => readClientConfig(plugin.storage),
      loadStsRole: (accountId) => readStsRole(plugin.storage, accountId),
      env,
      timeoutMs: base.timeoutMs,
    });
  const ctx: CloudAuthContext = { ...base, provider };
  const tidier = new Tidier(ctx);
  const paths: AnyPathDefinition[] = [
    configClientPath(ctx),
    configIdentityPath(ctx),
    ...configCertificatePaths(ctx),
    ...configStsPaths(ctx),
    ...configTidyPaths(ctx),
    configRotateRootPath(ctx),
    ...rolePaths(ctx),
    roleTagPath(ctx),
    loginPath(ctx),
    ...identityAccessListPaths(ctx),
    ...roleTagDenyListPaths(ctx),
    ...tidyPaths(tidier),
  ];
  return new FrameworkBackend({
    description: 'Log in with a cloud identity: a signed STS GetCallerIdentity request (iam) or a signed instance identity document (ec2).',
    paths,
    renew: (_req, auth) => renewLogin(ctx, auth),
    periodic: async () => {
      ctx.arnCache.sweep();
      await tidier.periodic();
    },
    cleanup: async () => {
      await tidier.drain();
      provider.flush();
    },
    // HA: another node changed the client or STS configuration the cached SDK clients were built from.
    invalidate: (key) => {
      if (key.startsWith('config/')) provider.flush();
    },
  });
}

/** The method's block of the server's configuration file, `plugin "cloud" { … }` (or the older `cloud_auth { … }`). */
export interface CloudAuthSettings {
  /** Accept instance identity documents signed with SHA-1 (off unless set). */
  readonly allowSha1Signatures: boolean;
}

/** Reads the plugin block; an unknown key or a value that is not a boolean fails the mount, naming it. */
export function readSettings(config: PluginConfig): CloudAuthSettings {
  for (const key of Object.keys(config)) {
    if (key !== 'allow_sha1_signatures') throw new BadRequestError(`plugin "cloud" configuration: unknown key "${key}" (the block takes allow_sha1_signatures)`);
  }
  try {
    return { allowSha1Signatures: config.allow_sha1_signatures === undefined ? false : parseBool(config.allow_sha1_signatures) };
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`plugin "cloud" configuration: allow_sha1_signatures: ${err.message}`);
    throw err;
  }
}

export const cloudAuthPlugin: PluginManifest = { ...CLOUD_PLUGIN, factory: (context) => createCloudAuthBackend(context) };

/** The same plugin under another type name (manifest.ts says why). */
export const awsAuthPlugin: PluginManifest = { ...AWS_PLUGIN, factory: (context) => createCloudAuthBackend(context) };
