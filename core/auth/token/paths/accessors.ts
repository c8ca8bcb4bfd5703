/** `auth/token/accessors` (LIST, sudo) and `auth/token/tidy`. */
import { definePath, listResponse, type AnyPathDefinition } from '../../../framework/index.js';
import type { TokenDeps } from '../services.js';

export function accessorPaths(services: TokenDeps): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'accessors/',
      fields: {},
      sudo: true,
      operations: { list: { summary: 'List token accessors.', handler: async () => listResponse(await services.store.listAccessors()) } },
      synopsis: 'List the accessors of every live service token.',
      description: 'Needs sudo. Batch tokens have no accessor.',
    }),
    definePath({
      pattern: 'tidy',
      fields: {},
      operations: {
        update: {
          summary: 'Remove expired tokens now.',
          handler: async () => {
            const swept = await services.store.sweepExpired();
            return { data: { swept }, warnings: ['Tidy operation successfully completed.'] };
          },
        },
      },
      synopsis: 'Clean up expired tokens.',
      description: 'The periodic timer does this too; this runs it at once.',
    }),
  ];
}
