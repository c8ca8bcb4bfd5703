/**
 * The identity backend, mounted at `identity/` (built in): entities, groups and their aliases.
 * Each API path lives in paths/, named after it.
 */
import { FrameworkBackend } from '../../framework/index.js';
import type { MountByAccessor } from './entities.js';
import type { IdentityStore } from './identity-store.js';
import { entityAliasPaths } from './paths/entity-alias.js';
import { entityPaths } from './paths/entity.js';
import { groupAliasPaths } from './paths/group-alias.js';
import { groupPaths } from './paths/group.js';
import { lookupPaths } from './paths/lookup.js';

export interface IdentityBackendDeps {
  readonly store: IdentityStore;
  /** The auth mount an alias names by accessor. */
  readonly mounts: MountByAccessor;
}

export function createIdentityBackend(deps: IdentityBackendDeps): FrameworkBackend {
  const { store, mounts } = deps;
  return new FrameworkBackend({
    description: 'identity store',
    paths: [
      ...entityPaths(store),
      ...entityAliasPaths(store, mounts),
      ...groupPaths(store),
      ...groupAliasPaths(store, mounts),
      ...lookupPaths(store),
    ],
  });
}
