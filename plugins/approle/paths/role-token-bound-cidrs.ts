/** `role/:role_name/token-bound-cidrs`: the CIDR blocks the tokens of the role are limited to. */
import { applyTokenFields, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the CIDR blocks the tokens of the role are limited to';

export function roleTokenBoundCidrsPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/token-bound-cidrs',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_bound_cidrs: TOKEN_FIELDS.token_bound_cidrs,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_bound_cidrs: role.token_bound_cidrs })),
      update: updateProperty(ctx, WHAT, (role, input: { token_bound_cidrs?: string[] | undefined }, req) => {
        applyTokenFields(req, { token_bound_cidrs: input.token_bound_cidrs ?? missing('token_bound_cidrs') }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_bound_cidrs = [];
      }),
    },
    synopsis: 'Read, set or reset the token_bound_cidrs of a role.',
    description: 'The same setting as token_bound_cidrs of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
