/** `sys/capabilities-self`, `sys/capabilities`, `sys/capabilities-accessor`: what a token may do on paths. */
import { BadRequestError } from '../../errors.js';
import { definePath, type AnyPathDefinition, type LogicalRequest } from '../../framework/index.js';
import type { TokenEntry } from '../../auth/token-store.js';
import type { AuthzDeps } from '../services.js';

const PATHS = {
  paths: { type: 'comma-string-list', description: 'The paths to report capabilities on.' },
  path: { type: 'comma-string-list', description: 'Deprecated alias of paths.', deprecated: true },
} as const;

async function report(authz: AuthzDeps, entry: TokenEntry, paths: string[] | undefined, legacy: string[] | undefined) {
  const list = paths && paths.length > 0 ? paths : legacy && legacy.length > 0 ? legacy : undefined;
  if (!list) throw new BadRequestError('paths must be supplied');
  const acl = await authz.aclFor(entry);
  const data: Record<string, unknown> = {};
  for (const path of list) data[path] = acl.capabilities(path.replace(/^\/+/, ''));
  if (list.length === 1) data.capabilities = data[list[0]!];
  return { data };
}

export function capabilityPaths(getAuthz: () => AuthzDeps): AnyPathDefinition[] {
  const self = async (req: LogicalRequest, input: { paths?: string[]; path?: string[] }) => {
    const authz = getAuthz();
    const token = req.clientToken ? await authz.tokens.lookup(req.clientToken) : undefined;
    if (!token) throw new BadRequestError('no token given');
    return report(authz, token.entry, input.paths, input.path);
  };
  return [
    definePath({
      pattern: 'capabilities-self',
      fields: PATHS,
      refusedFields: { token: 'capabilities-self reports on the calling token; sys/capabilities reports on another' },
      operations: { update: { summary: "The calling token's capabilities.", handler: self } },
      synopsis: "Report the calling token's capabilities on paths.",
      description: 'Capabilities are sorted; "deny" when nothing is granted, "root" for root tokens.',
    }),
    definePath({
      pattern: 'capabilities',
      fields: { ...PATHS, token: { type: 'string', description: 'The token to report on.', sensitive: true } },
      operations: {
        update: {
          summary: "A token's capabilities.",
          handler: async (req, input) => {
            const authz = getAuthz();
            if (!input.token) return self(req, input);
            const token = await authz.tokens.lookup(input.token);
            if (!token) throw new BadRequestError('invalid token');
            return report(authz, token.entry, input.paths, input.path);
          },
        },
      },
      synopsis: "Report a token's capabilities on paths.",
      description: 'Without token, reports on the calling token.',
    }),
    definePath({
      pattern: 'capabilities-accessor',
      fields: { ...PATHS, accessor: { type: 'string', description: 'The accessor of the token to report on.', required: true } },
      operations: {
        update: {
          summary: "A token's capabilities, by accessor.",
          handler: async (_req, input) => {
            const authz = getAuthz();
            const found = await authz.tokens.lookupAccessor(input.accessor);
            if (!found) throw new BadRequestError('invalid accessor');
            return report(authz, found.entry, input.paths, input.path);
          },
        },
      },
      synopsis: "Report a token's capabilities on paths, by accessor.",
      description: 'Like capabilities, naming the token by accessor.',
    }),
  ];
}
