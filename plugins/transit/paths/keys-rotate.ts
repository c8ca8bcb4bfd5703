/** `keys/:name/rotate`: add a version. */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { keyBody } from '../keys/format.js';
import { rotateKey } from '../keys/operations.js';

export function keysRotatePath(ctx: TransitContext) {
  return definePath({
    pattern: 'keys/:name/rotate',
    fields: {
      name: { type: 'name', description: 'Name of the key.', required: true },
      managed_key_name: { type: 'string', description: 'Managed keys are not available (no managed-key backend is configured).' },
      managed_key_id: { type: 'string', description: 'Managed keys are not available (no managed-key backend is configured).' },
    },
    operations: {
      update: {
        summary: 'Rotate a key.',
        handler: async (_req, input) => {
          if (input.managed_key_name || input.managed_key_id) throw new BadRequestError('managed keys are not available: no managed-key backend is configured');
          return { data: keyBody(await rotateKey(ctx, input.name)) };
        },
      },
    },
    synopsis: 'Rotate a named key.',
    description: 'Adds a new version with fresh material and a fresh HMAC key; new encryptions use it, older ciphertexts still decrypt.',
  });
}
