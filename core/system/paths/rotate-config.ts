/** `sys/rotate/config`: when the barrier's active keyring term is replaced automatically. */
import { BadRequestError } from '../../errors.js';
import { definePath, goDuration } from '../../framework/index.js';
import { MAX_OPERATIONS_LIMIT } from '../../../storage/barrier.js';
import type { SystemDeps } from '../services.js';

/** Vault's floor: rotating more often than every million encryptions only churns the keyring. */
const MIN_MAX_OPERATIONS = 1_000_000;
/** Vault's floor for a rotation interval (24h): each rotation adds a term that stays forever. */
const MIN_INTERVAL_SECONDS = 24 * 3600;

export function rotateConfigPath(services: SystemDeps) {
  return definePath({
    pattern: 'rotate/config',
    fields: {
      max_operations: {
        type: 'int',
        description: `Rotate once the active term has encrypted more values than this (${MIN_MAX_OPERATIONS} to ${MAX_OPERATIONS_LIMIT}, the default).`,
        minimum: MIN_MAX_OPERATIONS,
        maximum: MAX_OPERATIONS_LIMIT,
      },
      interval: {
        type: 'duration',
        description: 'Rotate once the active term is older than this (at least 24h); 0 turns rotation by age off.',
      },
      enabled: {
        type: 'bool',
        description: 'Whether automatic rotation happens; encryptions are counted either way.',
      },
    },
    operations: {
      read: {
        summary: 'Read the automatic rotation settings.',
        handler: async () => {
          const config = services.barrier.rotationConfig();
          return {
            data: {
              max_operations: config.maxOperations,
              enabled: config.enabled,
              // Vault answers a Go duration string, or the number 0 when unset.
              interval: config.intervalSeconds > 0 ? goDuration(config.intervalSeconds) : 0,
            },
          };
        },
      },
      update: {
        summary: 'Change the automatic rotation settings (only the fields given).',
        handler: async (_req, input) => {
          const current = services.barrier.rotationConfig();
          const interval = input.interval ?? current.intervalSeconds;
          if (interval !== 0 && interval < MIN_INTERVAL_SECONDS) {
            throw new BadRequestError(`interval must be 0 or at least ${goDuration(MIN_INTERVAL_SECONDS)}`);
          }
          await services.barrier.setRotationConfig({
            enabled: input.enabled ?? current.enabled,
            maxOperations: input.max_operations ?? current.maxOperations,
            intervalSeconds: interval,
          });
          return null;
        },
      },
    },
    synopsis: 'Automatic rotation of the barrier encryption key.',
    description:
      'The active node replaces the active keyring term on its own once the term has encrypted more than max_operations values ' +
      'or is older than interval, checked with its periodic work. The settings are stored in the keyring, so every node and ' +
      'every restart keeps them.',
  });
}
