/** `role/:role_name/role-id`: the role ID a login names the role by; a custom one may be set. */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { missing, readProperty, updateProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'the role ID of the role';

export function roleIdPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/role-id',
    fields: {
      role_name: ROLE_NAME_FIELD,
      role_id: { type: 'string', description: 'The new role ID; no other role of the mount may have it.' },
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ role_id: role.role_id })),
      update: updateProperty(ctx, WHAT, (role, input: { role_id?: string | undefined }) => {
        const roleId = input.role_id || missing('role_id');
        if (roleId.trim() !== roleId) throw new BadRequestError('role_id cannot begin or end with white space: logins trim it');
        role.role_id = roleId;
      }),
    },
    synopsis: 'Read or set the role ID of a role.',
    description:
      'A login names its role by the role ID (with a secret ID unless bind_secret_id is false). The default is a random ' +
      'UUID; a custom one replaces it, and logins with the old one fail from then on.',
  });
}
