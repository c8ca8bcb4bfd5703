/** The token store's backend, mounted at `auth/token/` (built in, type `token`). */
import { FrameworkBackend } from '../../framework/index.js';
import type { TokenDeps } from './services.js';
import { createPaths } from './paths/create.js';
import { lookupPaths } from './paths/lookup.js';
import { renewPaths } from './paths/renew.js';
import { revokePaths } from './paths/revoke.js';
import { rolePaths } from './paths/roles.js';
import { accessorPaths } from './paths/accessors.js';

export function createTokenBackend(services: TokenDeps): FrameworkBackend {
  return new FrameworkBackend({
    description: 'token based credentials',
    paths: [
      ...createPaths(services),
      ...lookupPaths(services),
      ...renewPaths(services),
      ...revokePaths(services),
      ...rolePaths(services),
      ...accessorPaths(services),
    ],
  });
}
