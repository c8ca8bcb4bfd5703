/** `sys/remount`: move a secrets engine or an auth method to another path, keeping its data. */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { MountTableName } from '../../mounts/mount-entry.js';
import { normalizeMountPath } from '../../mounts/mount-table.js';
import type { MountMigrations } from '../mount-migrations.js';
import type { SystemDeps } from '../services.js';

/** Which table a `from`/`to` path names, and the path inside it (`auth/cloud` → auth, `cloud`). */
function splitTable(path: string): { table: MountTableName; path: string } {
  const trimmed = path.replace(/^\/+/, '');
  if (trimmed === 'auth' || trimmed.startsWith('auth/')) return { table: 'auth', path: trimmed.slice('auth/'.length) };
  return { table: 'secret', path: trimmed };
}

export function remountPath(services: SystemDeps, migrations: MountMigrations) {
  return definePath({
    pattern: 'remount',
    fields: {
      from: { type: 'string', description: 'The current path of the mount (auth methods under auth/).', required: true },
      to: { type: 'string', description: 'The new path of the mount, in the same table (auth/… for an auth method).', required: true },
    },
    sudo: true,
    operations: {
      update: {
        summary: 'Move a mount to another path.',
        handler: async (_req, input) => {
          const from = splitTable(input.from);
          const to = splitTable(input.to);
          if (from.table !== to.table) {
            throw new BadRequestError(
              from.table === 'auth'
                ? `cannot move auth method "${input.from}" to "${input.to}": an auth method stays under auth/`
                : `cannot move secrets engine "${input.from}" to "${input.to}": auth/ is for auth methods`,
            );
          }
          const entry = await services.unsealed.mounts.remount(from.table, from.path, to.path);
          const prefix = from.table === 'auth' ? 'auth/' : '';
          const migrationId = migrations.recordSuccess(`${prefix}${normalizeMountPath(from.path)}`, `${prefix}${entry.path}`);
          return { data: { migration_id: migrationId } };
        },
      },
    },
    synopsis: 'Move a mount to another path.',
    description:
      'Moves a secrets engine or an auth method (from and to both under auth/) to a new path. The mount keeps its data, ' +
      'UUID, accessor and configuration; tokens minted through a moved auth method stay valid and renewable, and their ' +
      'path follows the method. Policies naming the old path are not changed. The move is done when the answer comes; ' +
      'its migration_id can be looked up at sys/remount/status/:migration_id.',
  });
}
