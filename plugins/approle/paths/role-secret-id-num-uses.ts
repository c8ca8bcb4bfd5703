/** `role/:role_name/secret-id-num-uses`: the number of logins a new secret ID of the role allows. */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the number of logins a new secret ID of the role allows';

export function roleSecretIdNumUsesPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/secret-id-num-uses',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id_num_uses: { type: 'int', description: 'Logins a new secret ID allows; 0 is unlimited.' },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ secret_id_num_uses: role.secret_id_num_uses })),
      update: updateProperty(ctx, WHAT, (role, input: { secret_id_num_uses?: number | undefined }) => {
        const uses = input.secret_id_num_uses ?? missing('secret_id_num_uses');
        if (uses < 0) throw new BadRequestError('secret_id_num_uses cannot be negative');
        role.secret_id_num_uses = uses;
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.secret_id_num_uses = 0;
      }),
    },
    synopsis: 'Read, set or reset the secret_id_num_uses of a role.',
    description: 'The same setting as secret_id_num_uses of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
