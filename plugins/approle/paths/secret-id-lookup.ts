/** `role/:role_name/secret-id/lookup`: the properties of a secret ID, by the secret ID. */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing } from '../role-property.js';
import { existingRole } from '../role.js';
import { deleteSecretId, readSecretId, secretIdHmac, secretIdOfAccessor, secretIdResponse } from '../secret-id.js';
import { ROLE_NAME_FIELD } from './role.js';

export function secretIdLookupPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/secret-id/lookup',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id: { type: 'string', description: 'The secret ID to look up.', sensitive: true },
    },
    operations: {
      update: {
        summary: 'Look up a secret ID.',
        handler: async (_req, input) => {
          const secretId = input.secret_id || missing('secret_id');
          const role = await existingRole(ctx, input.role_name);
          const hmac = secretIdHmac(role, secretId);
          return ctx.secretIdLocks.run(hmac, async () => {
            const entry = await readSecretId(ctx, role, hmac);
            if (!entry) return null;
            // A secret ID whose accessor index is gone is half deleted: finish the job, as Vault does.
            if ((await secretIdOfAccessor(ctx, role, entry.secret_id_accessor)) === undefined) {
              await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
              throw new BadRequestError('invalid secret id');
            }
            return { data: secretIdResponse(entry) };
          });
        },
      },
    },
    synopsis: 'Read the properties of a secret ID.',
    description: 'Its accessor, uses left, TTL, creation, expiration and last update times, metadata and CIDR bounds; 404 when the role has no such secret ID.',
  });
}
