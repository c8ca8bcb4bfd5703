/** `users/:username` (create, read, update, delete) and `LIST users/`. */
import {
  applyTokenFields,
  defaultTokenSettings,
  definePath,
  listResponse,
  tokenSettingsResponse,
  LEGACY_TOKEN_FIELDS,
  TOKEN_FIELDS,
  type AnyPathDefinition,
  type FieldSpecs,
  type FieldValues,
  type LogicalRequest,
} from '../../../sdk/index.js';
import type { UserpassContext } from '../context.js';
import { deleteUser, listUsers, passwordHashOf, readUser, writeUser, type UserEntry } from '../user.js';

const FIELDS = {
  username: { type: 'name', description: 'The username (lower-cased).', required: true },
  password: { type: 'string', description: 'The password; stored only as a bcrypt hash. Required on create unless password_hash is given.', sensitive: true },
  password_hash: {
    type: 'string',
    description: 'A bcrypt hash of the password made elsewhere (cost 5 to 12), instead of password.',
    sensitive: true,
  },
  ...TOKEN_FIELDS,
  policies: LEGACY_TOKEN_FIELDS.policies,
  ttl: LEGACY_TOKEN_FIELDS.ttl,
  max_ttl: LEGACY_TOKEN_FIELDS.max_ttl,
  bound_cidrs: LEGACY_TOKEN_FIELDS.bound_cidrs,
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function userPaths(ctx: UserpassContext): AnyPathDefinition[] {
  const user = definePath({
    pattern: 'users/:username',
    fields: FIELDS,
    existenceCheck: async (_req, input) => (await readUser(ctx.storage, input.username)) !== undefined,
    operations: {
      read: {
        summary: 'Read a user.',
        handler: async (_req, input) => {
          const entry = await readUser(ctx.storage, input.username);
          return entry ? { data: tokenSettingsResponse(entry) } : null;
        },
      },
      create: { summary: 'Create a user.', handler: (req, input) => writeUserRequest(ctx, req, input) },
      update: { summary: 'Update a user; fields not sent keep their values.', handler: (req, input) => writeUserRequest(ctx, req, input) },
      delete: {
        summary: 'Delete a user.',
        handler: async (_req, input) => {
          await deleteUser(ctx.storage, input.username);
          return null;
        },
      },
    },
    synopsis: 'Manage the users who may log in.',
    description:
      'A user logs in with its username and password (login/:username) and gets a token with the user\'s token settings. ' +
      'Deleting a user does not revoke the tokens it already has; their renewal is refused from then on.',
  });

  const listing = definePath({
    pattern: 'users/',
    fields: {},
    operations: { list: { summary: 'List the usernames.', handler: async () => listResponse(await listUsers(ctx.storage)) } },
    synopsis: 'List the users.',
    description: 'The usernames (lower-case).',
  });
  return [user, listing];
}

/** Creates the user, or updates the fields the request sends (the user as stored now, under its lock). */
function writeUserRequest(ctx: UserpassContext, req: LogicalRequest, input: Input) {
  return ctx.userLocks.run(input.username.toLowerCase(), async () => {
    const stored = await readUser(ctx.storage, input.username);
    const entry: UserEntry = stored ? structuredClone(stored) : { password_hash: '', ...defaultTokenSettings(), legacy: {} };
    const warnings = applyTokenFields(req, input, entry, ctx.system.maxLeaseTtl());
    if (!stored || input.password || input.password_hash) entry.password_hash = await passwordHashOf(ctx.hasher, input.password, input.password_hash);
    await writeUser(ctx.storage, input.username, entry);
    return warnings.length > 0 ? { warnings } : null;
  });
}
