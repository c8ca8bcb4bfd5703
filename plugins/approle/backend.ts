/**
 * The AppRole auth method (mount type `approle`): machines and applications log in with a role ID
 * and a secret ID. This file wires the paths, the renewal hook and the periodic tidy for one mount.
 */
import { FrameworkBackend, type AnyPathDefinition, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { APPROLE_PLUGIN } from './manifest.js';
import { AppRoleContext } from './context.js';
import { Tidier } from './tidy.js';
import { renewLogin } from './renew.js';
import { rolePaths } from './paths/role.js';
import { rolePoliciesPath } from './paths/role-policies.js';
import { roleSecretIdNumUsesPath } from './paths/role-secret-id-num-uses.js';
import { roleSecretIdTtlPath } from './paths/role-secret-id-ttl.js';
import { rolePeriodPath } from './paths/role-period.js';
import { roleTokenNumUsesPath } from './paths/role-token-num-uses.js';
import { roleTokenTtlPath } from './paths/role-token-ttl.js';
import { roleTokenMaxTtlPath } from './paths/role-token-max-ttl.js';
import { roleBindSecretIdPath } from './paths/role-bind-secret-id.js';
import { roleBoundCidrListPath } from './paths/role-bound-cidr-list.js';
import { roleSecretIdBoundCidrsPath } from './paths/role-secret-id-bound-cidrs.js';
import { roleTokenBoundCidrsPath } from './paths/role-token-bound-cidrs.js';
import { roleLocalSecretIdsPath } from './paths/role-local-secret-ids.js';
import { roleIdPath } from './paths/role-id.js';
import { secretIdPath } from './paths/secret-id.js';
import { customSecretIdPath } from './paths/custom-secret-id.js';
import { secretIdLookupPath } from './paths/secret-id-lookup.js';
import { secretIdDestroyPath } from './paths/secret-id-destroy.js';
import { secretIdAccessorLookupPath } from './paths/secret-id-accessor-lookup.js';
import { secretIdAccessorDestroyPath } from './paths/secret-id-accessor-destroy.js';
import { loginPath } from './paths/login.js';
import { tidySecretIdPath } from './paths/tidy-secret-id.js';

export function createAppRoleBackend(plugin: PluginContext): FrameworkBackend {
  const ctx = new AppRoleContext(plugin.storage, plugin.system, plugin.clock, plugin.logger);
  const tidier = new Tidier(ctx);
  const paths: AnyPathDefinition[] = [
    ...rolePaths(ctx),
    rolePoliciesPath(ctx),
    roleSecretIdNumUsesPath(ctx),
    roleSecretIdTtlPath(ctx),
    rolePeriodPath(ctx),
    roleTokenNumUsesPath(ctx),
    roleTokenTtlPath(ctx),
    roleTokenMaxTtlPath(ctx),
    roleBindSecretIdPath(ctx),
    roleBoundCidrListPath(ctx),
    roleSecretIdBoundCidrsPath(ctx),
    roleTokenBoundCidrsPath(ctx),
    roleLocalSecretIdsPath(ctx),
    roleIdPath(ctx),
    secretIdPath(ctx),
    customSecretIdPath(ctx),
    secretIdLookupPath(ctx),
    secretIdDestroyPath(ctx),
    secretIdAccessorLookupPath(ctx),
    secretIdAccessorDestroyPath(ctx),
    loginPath(ctx),
    tidySecretIdPath(tidier),
  ];
  return new FrameworkBackend({
    description: 'Log in with a role ID and a secret ID: the auth method of machines and applications.',
    paths,
    renew: (_req, auth) => renewLogin(ctx, auth),
    periodic: () => tidier.periodic(),
    cleanup: () => tidier.drain(),
  });
}

export const appRolePlugin: PluginManifest = { ...APPROLE_PLUGIN, factory: (context) => createAppRoleBackend(context) };
