/** `role/:role_name/period`: the period of the tokens of the role. */
import { applyTokenFields, LEGACY_TOKEN_FIELDS, TOKEN_FIELDS, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the period of the tokens of the role';

export function rolePeriodPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/period',
    fields: {
      role_name: ROLE_NAME_FIELD,
      token_period: TOKEN_FIELDS.token_period,
      period: LEGACY_TOKEN_FIELDS.period,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ token_period: role.token_period, ...(role.legacy.period ? { period: role.legacy.period } : {}) })),
      update: updateProperty(ctx, WHAT, (role, input: { token_period?: number | undefined; period?: number | undefined }, req) => {
        if (input.token_period === undefined && input.period === undefined) missing('period');
        applyTokenFields(req, { token_period: input.token_period, period: input.period }, role, ctx.system.maxLeaseTtl());
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.token_period = 0;
        delete role.legacy.period;
      }),
    },
    synopsis: 'Read, set or reset the token_period of a role.',
    description: 'The same setting as token_period (or the deprecated period) of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
