/** `sys/seal`: seal the server (root or sudo). */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function sealPath(services: SystemDeps) {
  return definePath({
    pattern: 'seal',
    fields: {},
    sudo: true,
    operations: {
      update: {
        summary: 'Seal the server.',
        handler: async () => {
          await services.seal.seal();
          return null;
        },
      },
    },
    synopsis: 'Seal the server.',
    description: 'Drops every key from memory and tears down the backends. The server answers 503 until it is unsealed again.',
  });
}
