/** `role/:role_name/custom-secret-id`: give the role a secret ID of the caller's choosing. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { ISSUE_FIELDS, issueSecretId } from '../issue.js';
import { missing } from '../role-property.js';
import { ROLE_NAME_FIELD } from './role.js';

export function customSecretIdPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role_name/custom-secret-id',
    fields: {
      role_name: ROLE_NAME_FIELD,
      secret_id: { type: 'string', description: 'The secret ID to give the role.', sensitive: true },
      ...ISSUE_FIELDS,
    },
    operations: {
      update: { summary: 'Give the role a custom secret ID.', handler: (req, input) => issueSecretId(ctx, req, input, input.secret_id || missing('secret_id')) },
    },
    synopsis: 'Give the role a secret ID of your choosing.',
    description: 'The "push" model: the caller chooses the secret ID and delivers it. Stored only as its HMAC, like a generated one.',
  });
}
