/**
 * `sys/internal/ui/mounts/:path`: which mount serves a path, with its type and options, for a token
 * that may use something in that mount. The vault CLI's `kv` commands ask it whether a mount is
 * kv version 1 or 2 and where the mount ends. Any token may ask (the path is open, as in Vault);
 * one without access to the mount learns nothing, not even whether it exists.
 */
import { PermissionDeniedError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { routePrefixOf } from '../../mounts/mount-entry.js';
import { unsealedMounts, type SystemServices } from '../services.js';
import { mountInfo } from './mount-config.js';

export function internalUiMountsPath(services: SystemServices) {
  return definePath({
    pattern: 'internal/ui/mounts/:path+',
    fields: { path: { type: 'string', description: 'A path inside the mount (the mount path itself will do).', required: true } },
    // The handler checks the token itself: the answer depends on what it may do in the mount, not on this path.
    unauthenticated: true,
    operations: {
      read: {
        summary: 'Describe the mount that serves a path.',
        handler: async (req, input) => {
          const refusal = new PermissionDeniedError(
            `preflight capability check returned 403, please ensure client's policies grant access to path "${input.path}"`,
          );
          const token = req.clientToken ? await services.authz.tokens.lookup(req.clientToken) : undefined;
          if (!token) throw refusal;
          const found = unsealedMounts(services).resolve(input.path.replace(/^\/+/, ''));
          if (!found) throw refusal;
          const entry = found.mount.entry;
          const prefix = routePrefixOf(entry);
          if (!(await services.authz.aclFor(token.entry)).grantsUnder(prefix)) throw refusal;
          return { data: { ...mountInfo(entry), path: prefix } };
        },
      },
    },
    synopsis: 'Describe the mount serving a path (the CLI finds kv versions with it).',
    description:
      "The mount's type, options (a kv mount's version), config and path. 403 when the token may use nothing in that mount " +
      'or no mount serves the path.',
  });
}
