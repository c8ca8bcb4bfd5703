/** `role/:role_name/bind-secret-id`: whether logins with the role must present a secret ID. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, resetProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'whether logins with the role must present a secret ID';

export function roleBindSecretIdPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/bind-secret-id',
    fields: {
      role_name: ROLE_NAME_FIELD,
      bind_secret_id: { type: 'bool', description: 'Logins must present a secret ID of the role.' },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ bind_secret_id: role.bind_secret_id })),
      update: updateProperty(ctx, WHAT, (role, input: { bind_secret_id?: boolean | undefined }) => {
        role.bind_secret_id = input.bind_secret_id ?? missing('bind_secret_id');
      }),
      delete: resetProperty(ctx, WHAT, (role) => {
        role.bind_secret_id = true;
      }),
    },
    synopsis: 'Read, set or reset the bind_secret_id of a role.',
    description: 'The same setting as bind_secret_id of role/:role_name, on a path of its own for policies to grant apart.',
  });
}
