/** `auth/token/renew`, `renew-self`, `renew-accessor`. */
import { BadRequestError } from '../../../errors.js';
import { definePath, type AnyPathDefinition, type LogicalRequest } from '../../../framework/index.js';
import type { ResolvedToken } from '../../token-store.js';
import { authBlock } from '../issue.js';
import { callerToken, type TokenDeps } from '../services.js';

const INCREMENT = { type: 'duration', description: 'The TTL asked for; the token\'s original TTL when omitted.', default: 0 } as const;

export function renewPaths(services: TokenDeps): AnyPathDefinition[] {
  const renew = async (token: ResolvedToken, increment: number, req: LogicalRequest, echoId: boolean) => {
    if (token.entry.type === 'batch') throw new BadRequestError('batch tokens cannot be renewed');
    const { entry, warnings } = await services.renew(token, increment, req);
    return { tokenAuth: authBlock(echoId ? token.id : '', entry), ...(warnings.length ? { warnings } : {}) };
  };
  return [
    definePath({
      pattern: 'renew',
      fields: { token: { type: 'string', description: 'The token to renew.', sensitive: true }, increment: INCREMENT },
      operations: {
        update: {
          summary: 'Renew a token.',
          handler: async (req, input) => {
            if (!input.token) throw new BadRequestError('missing required field "token"');
            const token = await services.store.lookup(input.token);
            if (!token) throw new BadRequestError('invalid token');
            return renew(token, input.increment, req, true);
          },
        },
      },
      synopsis: 'Renew a token.',
      description: 'Extends the token\'s TTL by increment (or its original TTL), within its maximum lifetime.',
    }),
    definePath({
      pattern: 'renew-self',
      fields: { increment: INCREMENT },
      refusedFields: { token: 'renew-self renews the calling token; auth/token/renew renews another' },
      operations: {
        update: { summary: 'Renew the calling token.', handler: async (req, input) => renew(await callerToken(services, req), input.increment, req, true) },
      },
      synopsis: 'Renew the calling token.',
      description: 'Like renew, for the calling token.',
    }),
    definePath({
      pattern: 'renew-accessor',
      fields: { accessor: { type: 'string', description: 'The accessor of the token.', required: true }, increment: INCREMENT },
      operations: {
        update: {
          summary: 'Renew a token by accessor.',
          handler: async (req, input) => {
            const found = await services.store.lookupAccessor(input.accessor);
            if (!found) throw new BadRequestError('invalid accessor');
            return renew({ id: '', hash: found.hash, entry: found.entry }, input.increment, req, false);
          },
        },
      },
      synopsis: 'Renew a token by its accessor.',
      description: 'Like renew; the response does not include the token id.',
    }),
  ];
}
