/** `role/:role_name/secret-id/destroy`: delete a secret ID, by the secret ID. */
import { definePath, type AnyPathDefinition, type LogicalRequest } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing } from '../role-property.js';
import { existingRole } from '../role.js';
import { deleteSecretId, readSecretId, secretIdHmac } from '../secret-id.js';
import { ROLE_NAME_FIELD } from './role.js';

export function secretIdDestroyPath(ctx: AppRoleContext): AnyPathDefinition {
  const destroy = {
    summary: 'Delete a secret ID.',
    handler: async (_req: LogicalRequest, input: { role_name: string; secret_id?: string | undefined }) => {
      const secretId = input.secret_id || missing('secret_id');
      const role = await existingRole(ctx, input.role_name);
      const hmac = secretIdHmac(role, secretId);
      await ctx.secretIdLocks.run(hmac, async () => {
        const entry = await readSecretId(ctx, role, hmac);
        if (entry) await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
      });
      return null;
    },
  };
  return definePath({
    pattern: 'role/:role_name/secret-id/destroy',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id: { type: 'string', description: 'The secret ID to delete.', sensitive: true },
    },
    operations: { update: destroy, delete: destroy },
    synopsis: 'Delete a secret ID.',
    description: 'Logins with it fail from then on; tokens it already got stay valid. Deleting a secret ID the role does not have succeeds too.',
  });
}
