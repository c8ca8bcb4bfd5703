/** `role/:role_name/token-ttl`: the TTL of the tokens of the role. */
import { applyTokenFields, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the TTL of the tokens of the role';

export function roleTokenTtlPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/token-ttl',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_ttl: TOKEN_FIELDS.token_ttl,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_ttl: role.token_ttl })),
      update: updateProperty(ctx, WHAT, (role, input: { token_ttl?: number | undefined }, req) => {
        applyTokenFields(req, { token_ttl: input.token_ttl ?? missing('token_ttl') }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_ttl = 0;
      }),
    },
    synopsis: 'Read, set or reset the token_ttl of a role.',
    description: 'The same setting as token_ttl of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
