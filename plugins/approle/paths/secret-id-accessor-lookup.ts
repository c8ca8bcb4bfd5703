/** `role/:role_name/secret-id-accessor/lookup`: the properties of a secret ID, by its accessor. */
import { NotFoundError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing } from '../role-property.js';
import { existingRole } from '../role.js';
import { readSecretId, secretIdOfAccessor, secretIdResponse } from '../secret-id.js';
import { ROLE_NAME_FIELD } from './role.js';

export function secretIdAccessorLookupPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/secret-id-accessor/lookup',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id_accessor: { type: 'string', description: 'The accessor of the secret ID.' },
    },
    operations: {
      update: {
        summary: 'Look up a secret ID by its accessor.',
        handler: async (_req, input) => {
          const accessor = input.secret_id_accessor || missing('secret_id_accessor');
          const role = await existingRole(ctx, input.role_name);
          const hmac = await secretIdOfAccessor(ctx, role, accessor);
          if (hmac === undefined) throw new NotFoundError(`failed to find accessor entry for secret_id_accessor: "${accessor}"`);
          const entry = await readSecretId(ctx, role, hmac);
          return entry ? { data: secretIdResponse(entry) } : null;
        },
      },
    },
    synopsis: 'Read the properties of a secret ID by its accessor.',
    description: 'The same answer as secret-id/lookup, for a caller that holds the accessor rather than the secret ID.',
  });
}
