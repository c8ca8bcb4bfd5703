/** `sys/key-status` and `sys/rotate`: the barrier keyring's active term, and adding a term. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function keyStatusPath(services: SystemDeps) {
  return definePath({
    pattern: 'key-status',
    fields: {},
    operations: {
      read: {
        summary: 'Report the active keyring term.',
        handler: async () => {
          const status = services.barrier.keyStatus();
          return { data: { term: status.term, install_time: status.installTime.toISOString(), encryptions: status.encryptions } };
        },
      },
    },
    synopsis: 'The active encryption key of the barrier.',
    description:
      'The keyring term every new value is encrypted under, when it was installed and how many encryptions it has done since ' +
      'then (the count is stored periodically and on seal, so a crash can lose the most recent ones).',
  });
}

export function rotatePath(services: SystemDeps) {
  return definePath({
    pattern: 'rotate',
    fields: {},
    sudo: true,
    operations: {
      update: {
        summary: 'Add a new keyring term.',
        handler: async () => {
          await services.barrier.rotate();
          return null;
        },
      },
    },
    synopsis: 'Rotate the barrier encryption key.',
    description: 'Adds keyring term N+1; new writes use it, existing values stay readable under their own term.',
  });
}
