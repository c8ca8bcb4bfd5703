/**
 * `roletag-denylist/:role_tag` (deny-list, read, delete) and `LIST roletag-denylist`, and their
 * pre-1.7 names under `roletag-blacklist`. The tag is given in the path as is or base64-encoded,
 * for every operation (Vault decodes it only on write). Entries are keyed by the tag's canonical
 * form (deny-list.ts): read and delete find a tag under any spelling, a write takes only the
 * canonical one (as login does), and the list shows canonical tags.
 */
import { afterDuration, definePath, listResponse, type AnyPathDefinition, BadRequestError } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { deleteDenyListEntry, listDenyList, readDenyListEntry, tagFromPath, writeDenyListEntry } from '../deny-list.js';
import { RoleTagError, verifyRoleTag } from '../role-tag.js';

const CURRENT = 'roletag-denylist';
const DEPRECATED = 'roletag-blacklist';

export function roleTagDenyListPaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  return [CURRENT, DEPRECATED].flatMap((name) => [entryPath(ctx, name), listPath(ctx, name)]);
}

function entryPath(ctx: CloudAuthContext, name: string): AnyPathDefinition {
  return definePath({
    pattern: `${name}/:role_tag*`,
    fields: {
      role_tag: { type: 'string', description: 'The role tag value, as is or base64-encoded.', required: true },
    },
    existenceCheck: async (_req, input) => (await readDenyListEntry(ctx.storage, tagFromPath(input.role_tag))) !== undefined,
    operations: {
      create: { summary: 'Deny-list a role tag.', handler: (_req, input) => denyList(input.role_tag) },
      update: { summary: 'Deny-list a role tag again (its expiration moves on).', handler: (_req, input) => denyList(input.role_tag) },
      read: {
        summary: 'Read the deny-list entry of a role tag.',
        handler: async (_req, input) => {
          const entry = await readDenyListEntry(ctx.storage, tagFromPath(input.role_tag));
          return entry ? { data: { creation_time: entry.creation_time, expiration_time: entry.expiration_time } } : null;
        },
      },
      delete: {
        summary: 'Remove a role tag from the deny list.',
        handler: async (_req, input) => {
          await deleteDenyListEntry(ctx.storage, tagFromPath(input.role_tag));
          return null;
        },
      },
    },
    synopsis: 'Deny-list a role tag, read or remove its entry.',
    description:
      'A deny-listed role tag can no longer be used to log in; tokens already issued with it stay valid. The entry expires ' +
      "when no token from the tag can be alive any more (the longest of the tag's, the role's and the mount's max TTL) and is " +
      'removed by tidy after the safety buffer. Only a tag in its canonical form (exactly as role/<role>/tag returned it) can ' +
      'be deny-listed; reading or deleting an entry finds it by any spelling of the tag.' +
      (name === DEPRECATED ? ` Deprecated name of ${CURRENT}/:role_tag.` : ''),
  });

  async function denyList(given: string) {
    const value = tagFromPath(given);
    let verified;
    try {
      verified = await verifyRoleTag(ctx.storage, value);
    } catch (err) {
      if (err instanceof RoleTagError) throw new BadRequestError(`failed to verify the role tag and parse it: ${err.message}`);
      throw err;
    }
    const now = ctx.clock.now();
    const lifetime = Math.max(verified.tag.maxTtl, verified.role.token_max_ttl, ctx.system.maxLeaseTtl());
    const existing = await readDenyListEntry(ctx.storage, value);
    await writeDenyListEntry(ctx.storage, value, {
      creation_time: existing?.creation_time ?? now.toISOString(),
      expiration_time: afterDuration(now, lifetime).toISOString(),
    });
    return null;
  }
}

function listPath(ctx: CloudAuthContext, name: string): AnyPathDefinition {
  return definePath({
    pattern: `${name}/`,
    fields: {},
    operations: {
      list: { summary: 'List the deny-listed role tags.', handler: async () => listResponse(await listDenyList(ctx.storage)) },
    },
    synopsis: 'List the deny-listed role tags.',
    description: 'The role tags in the deny list, as tag values.' + (name === DEPRECATED ? ` Deprecated name of ${CURRENT}/.` : ''),
  });
}
