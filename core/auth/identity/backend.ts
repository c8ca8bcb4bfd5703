/**
 * The identity backend, mounted at `identity/` (built in): entities, groups and their aliases,
 * and identity tokens (docs/identity.md). Each API path lives in paths/ or oidc/paths/, named
 * after it.
 */
import { FrameworkBackend } from '../../framework/index.js';
import type { MountByAccessor } from './entities.js';
import type { IdentityStore } from './identity-store.js';
import type { IssuerDeps } from './oidc/id-tokens.js';
import { oidcConfigPath } from './oidc/paths/config.js';
import { oidcKeyPaths } from './oidc/paths/key.js';
import { oidcRolePaths } from './oidc/paths/role.js';
import { oidcTokenPaths } from './oidc/paths/token.js';
import { wellKnownPaths } from './oidc/paths/well-known.js';
import { entityAliasPaths } from './paths/entity-alias.js';
import { entityPaths } from './paths/entity.js';
import { groupAliasPaths } from './paths/group-alias.js';
import { groupPaths } from './paths/group.js';
import { lookupPaths } from './paths/lookup.js';

export interface IdentityBackendDeps extends IssuerDeps {
  readonly store: IdentityStore;
  /** The auth mount an alias names by accessor. */
  readonly mounts: MountByAccessor;
}

export function createIdentityBackend(deps: IdentityBackendDeps): FrameworkBackend {
  const { store, mounts, oidc } = deps;
  return new FrameworkBackend({
    description: 'identity store',
    paths: [
      ...entityPaths(store),
      ...entityAliasPaths(store, mounts),
      ...groupPaths(store),
      ...groupAliasPaths(store, mounts),
      ...lookupPaths(store),
      oidcConfigPath(deps),
      ...oidcKeyPaths(oidc),
      ...oidcRolePaths(oidc),
      ...oidcTokenPaths(deps),
      ...wellKnownPaths(deps),
    ],
    // Named keys rotate on their period; rotated-out public keys leave the key set when their verification TTL ends.
    periodic: () => oidc.rotateDue(),
  });
}
