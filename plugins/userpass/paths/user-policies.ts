/** `users/:username/policies`: set the policies of a user's tokens. */
import { BadRequestError, definePath, givenValue, sanitizePolicies, LEGACY_TOKEN_FIELDS, TOKEN_FIELDS, type AnyPathDefinition } from '../../../sdk/index.js';
import type { UserpassContext } from '../context.js';
import { readUser, writeUser } from '../user.js';

export function userPoliciesPath(ctx: UserpassContext): AnyPathDefinition {
  return definePath({
    pattern: 'users/:username/policies',
    fields: {
      username: { type: 'name', description: 'The username.', required: true },
      token_policies: TOKEN_FIELDS.token_policies,
      policies: LEGACY_TOKEN_FIELDS.policies,
    },
    operations: {
      update: {
        summary: "Set a user's token policies.",
        handler: (req, input) =>
          ctx.userLocks.run(input.username.toLowerCase(), async () => {
            const user = await readUser(ctx.storage, input.username);
            if (!user) throw new BadRequestError('username does not exist');
            const current = givenValue(req, input.token_policies, 'token_policies', []);
            const legacy = givenValue(req, input.policies, 'policies', []);
            if (current !== undefined) {
              user.token_policies = current;
              // Vault echoes the deprecated name back only while the client keeps writing it.
              if (legacy !== undefined) user.legacy.policies = current;
              else delete user.legacy.policies;
            } else if (legacy !== undefined) {
              user.token_policies = sanitizePolicies(legacy);
              user.legacy.policies = user.token_policies;
            }
            await writeUser(ctx.storage, input.username, user);
            return null;
          }),
      },
    },
    synopsis: "Update the policies of a user's tokens.",
    description: 'token_policies (or the deprecated policies) replaces the policies of the tokens the user gets from its next login on.',
  });
}
