/** `login`: exchange a role ID and a secret ID for a token. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { login } from '../login.js';

export function loginPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    pattern: 'login',
    unauthenticated: true,
    fields: {
      role_id: { type: 'string', description: 'The role ID of the role.' },
      secret_id: { type: 'string', description: 'A secret ID of the role; required unless the role has bind_secret_id off.', sensitive: true, default: '' },
    },
    // Failed logins count against the role ID, as in Vault: it names the role (the user) a login is for.
    userLockout: (input) => input.role_id?.trim(),
    operations: {
      update: {
        summary: 'Log in.',
        handler: async (req, input) => ({ auth: await login(ctx, req, (input.role_id ?? '').trim(), input.secret_id.trim()) }),
      },
    },
    synopsis: 'Log in with a role ID and a secret ID.',
    description:
      'Answers a token with the role\'s token settings, its metadata and the secret ID\'s. The role ID is always required, ' +
      'the secret ID unless the role has bind_secret_id off; the role\'s and the secret ID\'s CIDR bounds are checked. A ' +
      'secret ID with limited uses spends one; wrong secret IDs count towards the mount\'s user lockout of the role ID.',
  });
}
