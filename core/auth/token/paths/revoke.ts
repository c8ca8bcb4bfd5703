/** `auth/token/revoke`, `revoke-self`, `revoke-accessor`, `revoke-orphan`. */
import { BadRequestError } from '../../../errors.js';
import { definePath, type AnyPathDefinition } from '../../../framework/index.js';
import type { ResolvedToken } from '../../token-store.js';
import { callerToken, type TokenDeps } from '../services.js';

const TOKEN = { type: 'string', description: 'The token.', sensitive: true } as const;

export function revokePaths(services: TokenDeps): AnyPathDefinition[] {
  const revokeTree = async (token: ResolvedToken | undefined) => {
    if (token?.entry.type === 'batch') throw new BadRequestError('batch tokens cannot be revoked');
    if (token) await services.store.revokeTree(token.hash);
    return null;
  };
  return [
    definePath({
      pattern: 'revoke',
      fields: { token: TOKEN },
      operations: {
        update: {
          summary: 'Revoke a token and its children.',
          handler: async (_req, input) => {
            if (!input.token) throw new BadRequestError('missing required field "token"');
            return revokeTree(await services.store.lookup(input.token));
          },
        },
      },
      synopsis: 'Revoke a token and every token created from it.',
      description: 'Revoking an unknown token is not an error.',
    }),
    definePath({
      pattern: 'revoke-self',
      fields: {},
      operations: { update: { summary: 'Revoke the calling token.', handler: async (req) => revokeTree(await callerToken(services, req)) } },
      synopsis: 'Revoke the calling token and its children.',
      description: 'The token cannot be used afterwards.',
    }),
    definePath({
      pattern: 'revoke-accessor',
      fields: { accessor: { type: 'string', description: 'The accessor of the token.', required: true } },
      operations: {
        update: {
          summary: 'Revoke a token by accessor.',
          handler: async (_req, input) => {
            const found = await services.store.lookupAccessor(input.accessor);
            if (!found) throw new BadRequestError('invalid accessor');
            await services.store.revokeTree(found.hash);
            return null;
          },
        },
      },
      synopsis: 'Revoke a token and its children by accessor.',
      description: 'Like revoke, naming the token by its accessor.',
    }),
    definePath({
      pattern: 'revoke-orphan',
      fields: { token: TOKEN },
      sudo: true,
      operations: {
        update: {
          summary: 'Revoke a token, leaving its children as orphans.',
          handler: async (_req, input) => {
            if (!input.token) throw new BadRequestError('missing required field "token"');
            const token = await services.store.lookup(input.token);
            if (token?.entry.type === 'batch') throw new BadRequestError('batch tokens cannot be revoked');
            if (token) await services.store.revokeOrphan(token.hash);
            return null;
          },
        },
      },
      synopsis: 'Revoke a token without its children.',
      description: 'The children become orphans. Needs sudo.',
    }),
  ];
}
