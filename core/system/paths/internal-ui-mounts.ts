/**
 * `sys/internal/ui/mounts/:path`: which mount serves a path, with its type and options, for a token
 * that may use something in that mount. The vault CLI's `kv` commands ask it whether a mount is
 * kv version 1 or 2 and where the mount ends. Any token may ask (no policy needs to name this path,
 * as in Vault); one without access to the mount learns nothing, not even whether it exists. The
 * token is checked by the pipeline like any other (bound CIDRs, a use spent): Vault serves the path
 * unauthenticated and looks the token up in the handler, which skips both.
 */
import { PermissionDeniedError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { routePrefixOf } from '../../mounts/mount-entry.js';
import type { SystemDeps } from '../services.js';
import { mountInfo } from './mount-config.js';

export function internalUiMountsPath(services: SystemDeps) {
  return definePath({
    pattern: 'internal/ui/mounts/:path+',
    fields: { path: { type: 'string', description: 'A path inside the mount (the mount path itself will do).', required: true } },
    // The answer depends on what the token may do in the mount, not on this path.
    anyToken: true,
    operations: {
      read: {
        summary: 'Describe the mount that serves a path.',
        handler: async (req, input) => {
          const refusal = new PermissionDeniedError(
            `preflight capability check returned 403, please ensure client's policies grant access to path "${input.path}"`,
          );
          if (!req.auth) throw refusal;
          const found = services.unsealed.mounts.resolve(input.path.replace(/^\/+/, ''));
          if (!found) throw refusal;
          const entry = found.mount.entry;
          const prefix = routePrefixOf(entry);
          if (!(await services.authz.aclFor(req.auth)).grantsUnder(prefix)) throw refusal;
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
