/** `login/:username`: exchange a username and password for a token. */
import {
  BadRequestError,
  InvalidCredentialsError,
  PermissionDeniedError,
  cidrAllows,
  definePath,
  tokenAuth,
  type AnyPathDefinition,
} from '../../../sdk/index.js';
import type { UserpassContext } from '../context.js';
import { MAX_PASSWORD_BYTES, readUser } from '../user.js';

/** Vault's answer to a wrong password and to an unknown user alike. */
export const INVALID_CREDENTIALS = 'invalid username or password';

export function loginPath(ctx: UserpassContext): AnyPathDefinition {
  return definePath({
    pattern: 'login/:username',
    unauthenticated: true,
    fields: {
      username: { type: 'name', description: 'The username.', required: true },
      password: { type: 'string', description: "The user's password.", sensitive: true },
    },
    // Usernames are case-insensitive: every spelling of one counts towards the same lockout, which
    // Vault's did not (https://nvd.nist.gov/vuln/detail/CVE-2025-6004).
    userLockout: (input) => input.username.toLowerCase(),
    operations: {
      update: {
        summary: 'Log in.',
        handler: async (req, input) => {
          const username = input.username.toLowerCase();
          const password = input.password ?? '';
          if (password === '') throw new BadRequestError('missing password');
          const user = await readUser(ctx.storage, username);
          // An unknown user (or a password bcrypt could not tell from a shorter one) is checked
          // against the dummy hash, so the answer takes as long as for a wrong password.
          const usable = user !== undefined && Buffer.byteLength(password, 'utf8') <= MAX_PASSWORD_BYTES;
          const matches = await ctx.hasher.verify(password, usable ? user.password_hash : await ctx.dummyHash());
          // An unknown user's failures count towards the lockout too. Vault counts only existing
          // users', so its 403 after the threshold tells a guesser which usernames exist.
          if (!usable || !matches) throw new InvalidCredentialsError(INVALID_CREDENTIALS);
          if (!cidrAllows(user.token_bound_cidrs, req.connection.remoteAddress)) throw new PermissionDeniedError();
          return {
            auth: {
              ...tokenAuth(user),
              displayName: username,
              metadata: { username },
              internalData: { username },
              alias: { name: username },
            },
          };
        },
      },
    },
    synopsis: 'Log in with a username and password.',
    description:
      'Answers a token with the user\'s token settings. A wrong password and an unknown username get the same answer, ' +
      'after the same time; failed logins count towards the mount\'s user lockout (sys/locked-users).',
  });
}
