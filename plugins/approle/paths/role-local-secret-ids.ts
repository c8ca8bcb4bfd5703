/** `role/:role_name/local-secret-ids`: whether the secret IDs of the role are kept apart. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { readProperty } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

const WHAT = 'whether the secret IDs of the role are kept apart';

export function roleLocalSecretIdsPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/local-secret-ids',
    fields: {
      role_name: ROLE_NAME_FIELD,
    },
    operations: {
      read: readProperty(ctx, WHAT, (role) => ({ local_secret_ids: role.local_secret_ids })),
    },
    synopsis: 'Read the local_secret_ids of a role.',
    description: 'Set only when the role is created (role/:role_name).',
  });
}
