/** `sys/unseal`: submit one key share, or reset the collected shares. */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';
import { sealStatusBody } from './seal-status.js';

export function unsealPath(services: SystemDeps) {
  return definePath({
    pattern: 'unseal',
    fields: {
      key: { type: 'string', description: 'One unseal key share, hex or base64.', sensitive: true },
      reset: { type: 'bool', description: 'Discard the shares submitted so far.', default: false },
      migrate: { type: 'bool', description: 'Move a Shamir store to the configured auto seal with these shares (seal-status shows migration: true when one is pending).', default: false },
    },
    unauthenticated: true,
    allowedWhileSealed: true,
    operations: {
      update: {
        summary: 'Submit an unseal key share.',
        handler: async (_req, input) => {
          if (input.reset) {
            await services.seal.reset();
          } else {
            if (input.key === undefined) {
              throw new BadRequestError("'key' must be specified in request body as JSON, or 'reset' set to true");
            }
            await services.seal.submitShare(input.key, input.migrate);
          }
          return { raw: { status: 200, body: await sealStatusBody(services) } };
        },
      },
    },
    synopsis: 'Unseal the server with key shares.',
    description:
      'Each call submits one share. When the threshold is reached the shares are combined and the server ' +
      'unseals. A malformed or unknown share is refused without changing progress.',
  });
}
