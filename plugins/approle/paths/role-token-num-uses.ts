/** `role/:role_name/token-num-uses`: the uses of the tokens of the role. */
import { applyTokenFields, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the uses of the tokens of the role';

export function roleTokenNumUsesPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/token-num-uses',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_num_uses: TOKEN_FIELDS.token_num_uses,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_num_uses: role.token_num_uses })),
      update: updateProperty(ctx, WHAT, (role, input: { token_num_uses?: number | undefined }, req) => {
        applyTokenFields(req, { token_num_uses: input.token_num_uses ?? missing('token_num_uses') }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_num_uses = 0;
      }),
    },
    synopsis: 'Read, set or reset the token_num_uses of a role.',
    description: 'The same setting as token_num_uses of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
