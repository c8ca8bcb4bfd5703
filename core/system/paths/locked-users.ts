/**
 * `sys/locked-users` and `sys/locked-users/:mount_accessor/unlock/:alias_identifier`: the users
 * user lockout holds (core/auth/lockout/user-lockout.ts), and releasing one.
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

/** There are no namespaces here: every mount is in the root one, as Vault names it. */
const ROOT_NAMESPACE = { namespace_id: 'root', namespace_path: '' } as const;

export function lockedUserPaths(services: SystemDeps): AnyPathDefinition[] {
  const list = definePath({
    pattern: 'locked-users',
    fields: {
      mount_accessor: { type: 'string', description: 'Only the users locked on the auth mount with this accessor.' },
    },
    operations: {
      read: {
        summary: 'List the locked users, by auth mount.',
        handler: async (_req, input) => {
          const mounts = services.unsealed.mounts;
          const settingsOf = (accessor: string) => {
            const live = mounts.byAccessor(accessor);
            return live ? services.lockout.settingsFor(live.entry) : undefined;
          };
          const byMount = await services.lockout.lockedUsers(settingsOf, input.mount_accessor || undefined);
          const total = byMount.reduce((sum, mount) => sum + mount.counts, 0);
          return { data: { by_namespace: [{ ...ROOT_NAMESPACE, counts: total, mount_accessors: byMount }], total } };
        },
      },
    },
    synopsis: 'The users locked out after too many failed logins.',
    description:
      'Every auth mount with locked users (the most first), each with its accessor, how many and which users (alias ' +
      'identifiers: a username, a role ID); only the one mount when mount_accessor is given. A lock whose duration has ' +
      'passed is not listed (and is removed).',
  });

  const unlock = definePath({
    pattern: 'locked-users/:mount_accessor/unlock/:alias_identifier*',
    fields: {
      mount_accessor: { type: 'string', description: 'The accessor of the auth mount the user is locked on.', required: true },
      alias_identifier: {
        type: 'string',
        description: 'The locked user as its login names it: a username (userpass), a role ID (approle).',
        required: true,
      },
    },
    operations: {
      update: {
        summary: 'Unlock a user.',
        handler: async (_req, input) => {
          await services.lockout.unlock(input.mount_accessor, input.alias_identifier);
          return null;
        },
      },
    },
    synopsis: 'Unlock a user locked out after too many failed logins.',
    description: 'Clears the lock and the count of failed logins; unlocking a user that is not locked succeeds too.',
  });

  return [list, unlock];
}
