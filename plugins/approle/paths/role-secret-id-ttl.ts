/** `role/:role_name/secret-id-ttl`: the lifetime of the role's new secret IDs. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = "the lifetime of the role's new secret IDs";

export function roleSecretIdTtlPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/secret-id-ttl',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id_ttl: { type: 'duration', description: "Lifetime of a new secret ID; 0 is the mount's max lease TTL, or none." },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ secret_id_ttl: role.secret_id_ttl })),
      update: updateProperty(ctx, WHAT, (role, input: { secret_id_ttl?: number | undefined }) => {
        role.secret_id_ttl = input.secret_id_ttl ?? missing('secret_id_ttl');
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.secret_id_ttl = 0;
      }),
    },
    synopsis: 'Read, set or reset the secret_id_ttl of a role.',
    description: 'The same setting as secret_id_ttl of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
