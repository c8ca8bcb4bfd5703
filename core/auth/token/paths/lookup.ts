/** `auth/token/lookup`, `lookup-self`, `lookup-accessor`. */
import { BadRequestError, PermissionDeniedError } from '../../../errors.js';
import { definePath, type AnyPathDefinition } from '../../../framework/index.js';
import { lookupData } from '../issue.js';
import { callerToken, type TokenServices } from '../services.js';

export function lookupPaths(services: TokenServices): AnyPathDefinition[] {
  const self = async (req: Parameters<typeof callerToken>[1]) => {
    const token = await callerToken(services, req);
    return { data: lookupData(token.id, token.entry, services.store.now()) };
  };
  return [
    definePath({
      pattern: 'lookup',
      fields: { token: { type: 'string', description: 'The token to look up.', sensitive: true } },
      operations: {
        update: {
          summary: 'Look up a token.',
          handler: async (_req, input) => {
            if (!input.token) throw new BadRequestError('missing required field "token"');
            const token = await services.store.lookup(input.token);
            if (!token) throw new PermissionDeniedError('bad token');
            return { data: lookupData(token.id, token.entry, services.store.now()) };
          },
        },
      },
      synopsis: 'Look up a token.',
      description: 'Returns the token\'s properties: policies, TTL, metadata, accessor, parentage.',
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
            return { data: lookupData('', found.entry, services.store.now()) };
          },
        },
      },
      synopsis: 'Look up a token by its accessor.',
      description: 'Like lookup, without the token id.',
    }),
  ];
}
