/** `sys/init`: whether the server is initialized, and initializing it. */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { SystemServices } from '../services.js';

export function initPath(services: SystemServices) {
  return definePath({
    pattern: 'init',
    fields: {
      secret_shares: { type: 'int', description: 'Number of key shares to split the unseal key into.', minimum: 1, maximum: 255 },
      secret_threshold: { type: 'int', description: 'Number of key shares needed to unseal.', minimum: 1, maximum: 255 },
      pgp_keys: { type: 'comma-string-list', description: 'Not supported: key shares are returned unencrypted.' },
      root_token_pgp_key: { type: 'string', description: 'Not supported: the root token is returned unencrypted.' },
      stored_shares: { type: 'int', description: 'Accepted for compatibility; must be 0 with Shamir seals.' },
      recovery_shares: { type: 'int', description: 'Accepted for compatibility; ignored with Shamir seals.' },
      recovery_threshold: { type: 'int', description: 'Accepted for compatibility; ignored with Shamir seals.' },
      recovery_pgp_keys: { type: 'comma-string-list', description: 'Accepted for compatibility; ignored with Shamir seals.' },
    },
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      read: {
        summary: 'Report whether the server is initialized.',
        handler: async () => ({ raw: { status: 200, body: { initialized: await services.seal.isInitialized() } } }),
      },
      update: {
        summary: 'Initialize the server: create the keys and the root token.',
        handler: async (_req, input) => {
          if (input.pgp_keys && input.pgp_keys.length > 0) throw new BadRequestError('pgp_keys are not supported');
          if (input.root_token_pgp_key) throw new BadRequestError('root_token_pgp_key is not supported');
          if (input.stored_shares) throw new BadRequestError('stored_shares is not supported with Shamir seals');
          const result = await services.seal.initialize(input.secret_shares ?? 0, input.secret_threshold ?? 0);
          return {
            raw: {
              status: 200,
              body: {
                keys: result.keys.map((k) => k.toString('hex')),
                keys_base64: result.keys.map((k) => k.toString('base64')),
                root_token: result.rootToken,
              },
            },
          };
        },
      },
    },
    synopsis: 'Initialize a new server.',
    description:
      'GET reports whether the server is initialized. PUT with secret_shares and secret_threshold creates the ' +
      'unseal key (split with Shamir), the root key and the barrier keyring, and returns the key shares and the ' +
      'root token. The server stays sealed afterwards.',
  });
}
