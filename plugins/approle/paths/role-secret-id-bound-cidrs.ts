/** `role/:role_name/secret-id-bound-cidrs`: the CIDR blocks logins with the role must come from. */
import { checkCidrs, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the CIDR blocks logins with the role must come from';

export function roleSecretIdBoundCidrsPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/secret-id-bound-cidrs',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks logins with the role must come from.' },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ secret_id_bound_cidrs: role.secret_id_bound_cidrs })),
      update: updateProperty(ctx, WHAT, (role, input: { secret_id_bound_cidrs?: string[] | undefined }) => {
        const cidrs = input.secret_id_bound_cidrs?.length ? input.secret_id_bound_cidrs : missing('secret_id_bound_cidrs');
        checkCidrs(cidrs, 'secret_id_bound_cidrs');
        role.secret_id_bound_cidrs = cidrs;
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.secret_id_bound_cidrs = [];
      }),
    },
    synopsis: 'Read, set or reset the secret_id_bound_cidrs of a role.',
    description: 'The same setting as secret_id_bound_cidrs of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
