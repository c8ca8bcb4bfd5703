/** `users/:username/password`: set a user's password. */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { UserpassContext } from '../context.js';
import { passwordHashOf, readUser, writeUser } from '../user.js';

export function userPasswordPath(ctx: UserpassContext): AnyPathDefinition {
  return definePath({
    pattern: 'users/:username/password',
    fields: {
      username: { type: 'name', description: 'The username.', required: true },
      password: { type: 'string', description: 'The new password; stored only as a bcrypt hash.', sensitive: true },
      password_hash: { type: 'string', description: 'A bcrypt hash of the new password made elsewhere (cost 5 to 12), instead of password.', sensitive: true },
    },
    operations: {
      update: {
        summary: "Set a user's password.",
        handler: (_req, input) =>
          ctx.userLocks.run(input.username.toLowerCase(), async () => {
            const user = await readUser(ctx.storage, input.username);
            if (!user) throw new BadRequestError('username does not exist');
            user.password_hash = await passwordHashOf(ctx.hasher, input.password, input.password_hash);
            await writeUser(ctx.storage, input.username, user);
            return null;
          }),
      },
    },
    synopsis: "Reset a user's password.",
    description:
      'Send the new password (hashed here with bcrypt) or password_hash (a bcrypt hash made elsewhere), not both. ' +
      'Tokens the user already has stay valid.',
  });
}
