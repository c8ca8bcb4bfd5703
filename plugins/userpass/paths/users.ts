/** `users/:username` (create, read, update, delete) and `LIST users/`. */
import {
  applyTokenFields,
  defaultTokenSettings,
  namedRecordPaths,
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
  return namedRecordPaths({
    collection: 'users',
    key: 'username',
    noun: 'user',
    fields: FIELDS,
    read: (name) => readUser(ctx.storage, name),
    show: tokenSettingsResponse,
    write: (req, input) => writeUserRequest(ctx, req, input),
    remove: (name) => deleteUser(ctx.storage, name),
    list: () => listUsers(ctx.storage),
    synopsis: 'Manage the users who may log in.',
    description:
      'A user logs in with its username and password (login/:username) and gets a token with the user\'s token settings. ' +
      'Deleting a user does not revoke the tokens it already has; their renewal is refused from then on.',
    listing: { summary: 'List the usernames.', synopsis: 'List the users.', description: 'The usernames (lower-case).' },
  });
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
