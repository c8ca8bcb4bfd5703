/**
 * `identity-accesslist/:instance_id` (read, delete) and `LIST identity-accesslist`, and their
 * pre-1.7 names under `identity-whitelist`. Deleting an entry is how an operator lets an instance
 * log in again after disallow_reauthentication, or after it lost its nonce.
 */
import { definePath, listResponse, type AnyPathDefinition } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { deleteAccessListEntry, listAccessList, readAccessListEntry } from '../access-list.js';

const CURRENT = 'identity-accesslist';
const DEPRECATED = 'identity-whitelist';

export function identityAccessListPaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  return [CURRENT, DEPRECATED].flatMap((name) => [entryPath(ctx, name), listPath(ctx, name)]);
}

function entryPath(ctx: CloudAuthContext, name: string): AnyPathDefinition {
  return definePath({
    pattern: `${name}/:instance_id`,
    fields: {
      instance_id: { type: 'name', description: 'The EC2 instance ID.', required: true },
    },
    operations: {
      read: {
        summary: 'Read the access-list entry of an instance.',
        handler: async (_req, input) => {
          const entry = await readAccessListEntry(ctx.storage, input.instance_id);
          if (!entry) return null;
          return {
            data: {
              role: entry.role,
              client_nonce: entry.client_nonce,
              creation_time: entry.creation_time,
              disallow_reauthentication: entry.disallow_reauthentication,
              pending_time: entry.pending_time,
              expiration_time: entry.expiration_time,
              last_updated_time: entry.last_updated_time,
            },
          };
        },
      },
      delete: {
        summary: 'Delete the access-list entry of an instance.',
        handler: async (_req, input) => {
          // Under the instance's lock, so a login in progress cannot write the entry back.
          await ctx.accessListLocks.run(input.instance_id, () => deleteAccessListEntry(ctx.storage, input.instance_id));
          return null;
        },
      },
    },
    synopsis: 'Read or delete the identity access-list entry of an instance.',
    description:
      'An entry is written by every successful ec2 login of the instance: its role, client nonce, pendingTime and times. ' +
      'Deleting it lets the instance log in afresh (with any nonce).' +
      (name === DEPRECATED ? ` Deprecated name of ${CURRENT}/:instance_id.` : ''),
  });
}

function listPath(ctx: CloudAuthContext, name: string): AnyPathDefinition {
  return definePath({
    pattern: `${name}/`,
    fields: {},
    operations: {
      list: { summary: 'List the instance IDs in the access list.', handler: async () => listResponse(await listAccessList(ctx.storage)) },
    },
    synopsis: 'List the instances that logged in with ec2.',
    description: 'Instance IDs with an identity access-list entry.' + (name === DEPRECATED ? ` Deprecated name of ${CURRENT}/.` : ''),
  });
}
