/** `auth/token/lookup`, `lookup-self`, `lookup-accessor`. */
import { BadRequestError, PermissionDeniedError } from '../../../errors.js';
import { definePath, type AnyPathDefinition } from '../../../framework/index.js';
import { lookupData } from '../issue.js';
import { callerToken, type TokenDeps } from '../services.js';

export function lookupPaths(services: TokenDeps): AnyPathDefinition[] {
  const self = async (req: Parameters<typeof callerToken>[1]) => {
    const token = await callerToken(services, req);
    return { data: lookupData(token.id, token.entry, services.store.now(), await services.identityPolicies(token.entry.entityId)) };
  };
  const lookup = async (req: Parameters<typeof callerToken>[1], given: string | undefined) => {
    if (!given) return self(req);
    const token = await services.store.lookup(given);
    if (!token) throw new PermissionDeniedError('bad token');
    return { data: lookupData(token.id, token.entry, services.store.now(), await services.identityPolicies(token.entry.entityId)) };
  };
  return [
    definePath({
      pattern: 'lookup',
      fields: { token: { type: 'string', description: 'The token to look up.', sensitive: true } },
      operations: {
        read: { summary: 'Look up a token (the calling token when none is given).', handler: (req, input) => lookup(req, input.token) },
        update: { summary: 'Look up a token (the calling token when none is given).', handler: (req, input) => lookup(req, input.token) },
      },
      synopsis: 'Look up a token.',
      description:
        'Returns the token\'s properties: policies, TTL, metadata, accessor, parentage. Without "token", the calling token, as ' +
        'in Vault (prefer the body to the query string for another token: URLs end up in logs).',
    }),
    definePath({
      pattern: 'lookup-self',
      fields: {},
      refusedFields: { token: 'lookup-self looks up the calling token; auth/token/lookup looks up another' },
      operations: {
        read: { summary: 'Look up the calling token.', handler: self },
        update: { summary: 'Look up the calling token.', handler: self },
      },
      synopsis: 'Look up the calling token.',
      description: 'Returns the calling token\'s properties.',
    }),
    definePath({
      pattern: 'lookup-accessor',
      fields: { accessor: { type: 'string', description: 'The accessor of the token.', required: true } },
      operations: {
        update: {
          summary: 'Look up a token by accessor.',
          handler: async (_req, input) => {
            const found = await services.store.lookupAccessor(input.accessor);
            if (!found) throw new BadRequestError('invalid accessor');
            return { data: lookupData('', found.entry, services.store.now(), await services.identityPolicies(found.entry.entityId)) };
          },
        },
      },
      synopsis: 'Look up a token by its accessor.',
      description: 'Like lookup, without the token id.',
    }),
  ];
}
