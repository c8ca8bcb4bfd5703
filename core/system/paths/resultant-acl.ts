/**
 * `sys/internal/ui/resultant-acl`: the calling token's policies merged into one view of what it
 * may do where, as Vault's UI reads it
 * (https://developer.hashicorp.com/vault/api-docs/system/internal-ui-resultant-acl): rules by path,
 * exact paths apart from prefixes (a prefix rule's key without its `*`), each path's capabilities
 * the union of its rules' (`deny` alone when any rule denies).
 */
import { PermissionDeniedError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function resultantAclPath(services: SystemDeps) {
  return definePath({
    pattern: 'internal/ui/resultant-acl',
    fields: {},
    anyToken: true,
    operations: {
      read: {
        summary: 'The calling token\'s merged policies.',
        handler: async (req) => {
          if (!req.auth) throw new PermissionDeniedError();
          if (req.auth.root) return { data: { root: true, exact_paths: {}, glob_paths: {} } };
          const exact = new Map<string, Set<string>>();
          const glob = new Map<string, Set<string>>();
          for (const name of req.auth.policies) {
            const policy = await services.authz.policies.get(name);
            for (const rule of policy?.rules ?? []) {
              const [table, key] = rule.path.endsWith('*') ? [glob, rule.path.slice(0, -1)] : [exact, rule.path];
              let capabilities = table.get(key);
              if (!capabilities) table.set(key, (capabilities = new Set()));
              for (const capability of rule.capabilities) capabilities.add(capability);
            }
          }
          const shape = (table: Map<string, Set<string>>) =>
            Object.fromEntries([...table].sort(([a], [b]) => a.localeCompare(b)).map(([path, caps]) => [path, { capabilities: caps.has('deny') ? ['deny'] : [...caps].sort() }]));
          return { data: { root: false, exact_paths: shape(exact), glob_paths: shape(glob) } };
        },
      },
    },
    synopsis: 'What the calling token may do, by path.',
    description:
      'The rules of the token\'s own policies merged by path: exact_paths and glob_paths (prefix rules, keyed without ' +
      'their `*`) with their capabilities; root is true for a root token. Templated paths are shown as written.',
  });
}
