/** `role/:role_name/token-max-ttl`: the maximum TTL of the tokens of the role. */
import { applyTokenFields, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the maximum TTL of the tokens of the role';

export function roleTokenMaxTtlPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/token-max-ttl',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_max_ttl: TOKEN_FIELDS.token_max_ttl,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_max_ttl: role.token_max_ttl })),
      update: updateProperty(ctx, WHAT, (role, input: { token_max_ttl?: number | undefined }, req) => {
        applyTokenFields(req, { token_max_ttl: input.token_max_ttl ?? missing('token_max_ttl') }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_max_ttl = 0;
      }),
    },
    synopsis: 'Read, set or reset the token_max_ttl of a role.',
    description: 'The same setting as token_max_ttl of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
