/** `role/:role_name/secret-id-accessor/destroy`: delete a secret ID, by its accessor. */
import { NotFoundError, PermissionDeniedError, definePath, type AnyPathDefinition, type LogicalRequest } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing } from '../role-property.js';
import { existingRole } from '../role.js';
import { deleteSecretId, readSecretId, secretIdOfAccessor } from '../secret-id.js';
import { ROLE_NAME_FIELD } from './role.js';

export function secretIdAccessorDestroyPath(ctx: AppRoleContext): AnyPathDefinition {
  const destroy = {
    summary: 'Delete a secret ID by its accessor.',
    handler: async (_req: LogicalRequest, input: { role_name: string; secret_id_accessor?: string | undefined }) => {
      const accessor = input.secret_id_accessor || missing('secret_id_accessor');
      const role = await existingRole(ctx, input.role_name);
      const hmac = await secretIdOfAccessor(ctx, role, accessor);
      if (hmac === undefined) throw new NotFoundError(`failed to find accessor entry for secret_id_accessor: "${accessor}"`);
      await ctx.secretIdLocks.run(hmac, async () => {
        // The accessor index is the mount's, not the role's: an accessor of another role's
        // secret ID is found, and must not reach it. (Tidy removes indexes left behind.)
        if (!(await readSecretId(ctx, role, hmac))) throw new PermissionDeniedError('invalid secret id accessor');
        await deleteSecretId(ctx, role, hmac, accessor);
      });
      return null;
    },
  };
  return definePath({
    pattern: 'role/:role_name/secret-id-accessor/destroy',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id_accessor: { type: 'string', description: 'The accessor of the secret ID to delete.' },
    },
    operations: { update: destroy, delete: destroy },
    synopsis: 'Delete a secret ID by its accessor.',
    description: 'Logins with the secret ID fail from then on; tokens it already got stay valid.',
  });
}
