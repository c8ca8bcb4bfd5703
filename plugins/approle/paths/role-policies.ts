/** `role/:role_name/policies`: the policies of the tokens of the role. */
import { applyTokenFields, LEGACY_TOKEN_FIELDS, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the policies of the tokens of the role';

export function rolePoliciesPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/policies',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_policies: TOKEN_FIELDS.token_policies,
      policies: LEGACY_TOKEN_FIELDS.policies,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_policies: role.token_policies, ...(role.legacy.policies?.length ? { policies: role.legacy.policies } : {}) })),
      update: updateProperty(ctx, WHAT, (role, input: { token_policies?: string[] | undefined; policies?: string[] | undefined }, req) => {
        if (input.token_policies === undefined && input.policies === undefined) missing('token_policies');
        applyTokenFields(req, { token_policies: input.token_policies, policies: input.policies }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_policies = [];
        delete role.legacy.policies;
      }),
    },
    synopsis: 'Read, set or reset the token_policies of a role.',
    description: 'The same setting as token_policies (or the deprecated policies) of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
