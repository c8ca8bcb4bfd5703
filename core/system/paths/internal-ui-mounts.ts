/**
 * `sys/internal/ui/mounts`: the mounts a sign-in page or a token may see. `sys/internal/ui/mounts/:path`: which mount serves a path, with its type and options, for a token
 * that may use something in that mount. The vault CLI's `kv` commands ask it whether a mount is
 * kv version 1 or 2 and where the mount ends. Any token may ask (no policy needs to name this path,
 * as in Vault); one without access to the mount learns nothing, not even whether it exists. The
 * token is checked by the pipeline like any other (bound CIDRs, a use spent): Vault serves the path
 * unauthenticated and looks the token up in the handler, which skips both.
 */
import { PermissionDeniedError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { routePrefixOf, type MountTableName } from '../../mounts/mount-entry.js';
import type { SystemDeps } from '../services.js';
import { mountInfo } from './mount-config.js';

/**
 * `sys/internal/ui/mounts` (https://developer.hashicorp.com/vault/api-docs/system/internal-ui-mounts),
 * served without a token as in Vault: the web UI's sign-in page offers the auth methods tuned with
 * `listing_visibility="unauth"`. Without a usable token the answer holds only those mounts (of both
 * tables, as Vault's), each with its type, description and options and nothing else (no accessor,
 * no config); with a token, every mount that token may use something in, described in full. The
 * work is one pass over the operator's mount tables, whatever the request says.
 */
export function internalUiMountListPath(services: SystemDeps) {
  return definePath({
    pattern: 'internal/ui/mounts',
    fields: {},
    unauthenticated: true,
    operations: {
      read: {
        summary: 'List the mounts offered to the caller (without a token: those tuned listing_visibility="unauth").',
        handler: async (req) => {
          const acl = req.auth ? await services.authz.aclFor(req.auth) : undefined;
          const listed = (table: MountTableName) => {
            const out: Record<string, unknown> = {};
            for (const entry of services.unsealed.mounts.entries(table)) {
              const unauth = entry.config.listing_visibility === 'unauth';
              if (acl && (unauth || acl.grantsUnder(routePrefixOf(entry)))) out[entry.path] = mountInfo(entry);
              else if (unauth) out[entry.path] = { type: entry.type, description: entry.description, options: entry.options };
            }
            return out;
          };
          return { data: { secret: listed('secret'), auth: listed('auth') } };
        },
      },
    },
    synopsis: 'List the mounts a sign-in page or a token may see.',
    description:
      'Without a token: the mounts tuned with listing_visibility="unauth", each with its type, description and options. ' +
      'With a token: every mount the token may use something in, described as sys/mounts and sys/auth describe it.',
  });
}

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
