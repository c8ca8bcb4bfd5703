/** `role/:role_name/bound-cidr-list`: the CIDR blocks logins with the role must come from (deprecated name). */
import { checkCidrs, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const DEPRECATED = 'The "bound_cidr_list" field is deprecated and will be removed. Please use "secret_id_bound_cidrs" instead.';
const WHAT = 'the CIDR blocks logins with the role must come from (deprecated name)';

export function roleBoundCidrListPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/bound-cidr-list',
    fields: {
      role_name: ROLE_NAME_FIELD,
      bound_cidr_list: { type: 'comma-string-list', description: 'Deprecated: use secret_id_bound_cidrs.' },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ bound_cidr_list: role.secret_id_bound_cidrs }), [DEPRECATED]),
      update: updateProperty(ctx, WHAT, (role, input: { bound_cidr_list?: string[] | undefined }) => {
        const cidrs = input.bound_cidr_list?.length ? input.bound_cidr_list : missing('bound_cidr_list');
        checkCidrs(cidrs, 'bound_cidr_list');
        role.secret_id_bound_cidrs = cidrs;
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.secret_id_bound_cidrs = [];
      }),
    },
    synopsis: 'Deprecated name of role/:role_name/secret-id-bound-cidrs.',
    description: 'Reads and writes secret_id_bound_cidrs under its pre-0.10 name; a read answers with a warning, as Vault does.',
  });
}
