/** `sys/remount/status/:migration_id`: how a move made through sys/remount went. */
import { NotFoundError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { MountMigrations } from '../mount-migrations.js';
import type { SystemDeps } from '../services.js';

export function remountStatusPath(services: SystemDeps, migrations: MountMigrations) {
  return definePath({
    pattern: 'remount/status/:migration_id',
    fields: {
      migration_id: { type: 'string', description: 'The migration_id sys/remount answered.', required: true },
    },
    operations: {
      read: {
        summary: 'Report how a mount move went.',
        handler: async (_req, input) => {
          // Moves are recorded on the active node, which made them: a standby forwards the question.
          services.requireActive();
          const migration = migrations.get(input.migration_id);
          if (!migration) throw new NotFoundError(`no mount migration with id "${input.migration_id}"`);
          return { data: { migration_id: input.migration_id, migration_info: { ...migration } } };
        },
      },
    },
    synopsis: 'The status of a mount move.',
    description:
      'The source and target mounts of a move and its status (success once sys/remount has answered). Moves are remembered ' +
      'in memory by the active node that made them, until it restarts or hands the role over.',
  });
}
