/** `config/sts/:account_id` and `LIST config/sts`: the role to assume for each satellite account. */
import { definePath, listResponse, type AnyPathDefinition, BadRequestError } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { readStsRole } from '../client-config.js';
import { STORAGE_KEYS, writeJson } from '../storage.js';

export function configStsPaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  const entry = definePath({
    pattern: 'config/sts/:account_id',
    fields: {
      account_id: { type: 'name', description: 'The satellite account ID (not the account the service runs in).', required: true },
      sts_role: { type: 'string', description: 'ARN of the role to assume for calls about that account.' },
    },
    refusedFields: { external_id: 'the role is assumed without an external ID; a role whose trust policy demands one cannot be assumed here' },
    existenceCheck: async (_req, input) => (await readStsRole(ctx.storage, input.account_id)) !== undefined,
    operations: {
      read: {
        summary: 'Read the role of an account.',
        handler: async (_req, input) => {
          const role = await readStsRole(ctx.storage, input.account_id);
          return role === undefined ? null : { data: { sts_role: role } };
        },
      },
      create: {
        summary: 'Associate a role with an account.',
        handler: async (req, input) => {
          if (input.sts_role === undefined) throw new BadRequestError(req.data.sts_role === '' ? 'sts role cannot be empty' : 'missing sts role');
          return save(input.account_id, input.sts_role);
        },
      },
      update: {
        summary: 'Change the role of an account.',
        handler: async (req, input) => {
          if (input.sts_role === undefined) {
            if (req.data.sts_role === '') throw new BadRequestError('sts role cannot be empty');
            return null;
          }
          return save(input.account_id, input.sts_role);
        },
      },
      delete: {
        summary: 'Remove the role of an account.',
        handler: async (_req, input) => {
          await ctx.storage.delete(STORAGE_KEYS.stsPrefix + input.account_id);
          ctx.provider.flush();
          return null;
        },
      },
    },
    synopsis: 'Associate an STS role with a satellite account.',
    description:
      'Calls about instances or principals of that account (describe instances, read IAM principals) are made with ' +
      'credentials of this role, assumed with the configured credentials.',
  });

  async function save(accountId: string, stsRole: string) {
    await writeJson(ctx.storage, STORAGE_KEYS.stsPrefix + accountId, { sts_role: stsRole });
    ctx.provider.flush();
    return null;
  }

  const list = definePath({
    pattern: 'config/sts/',
    fields: {},
    operations: {
      list: {
        summary: 'List accounts with an STS role.',
        handler: async () => listResponse((await ctx.storage.list(STORAGE_KEYS.stsPrefix)).filter((k) => !k.endsWith('/'))),
      },
    },
    synopsis: 'List the accounts that have an STS role.',
    description: 'Account IDs configured through config/sts/:account_id.',
  });
  return [entry, list];
}
