/**
 * `sys/loggers` and `sys/loggers/:name`: read and change log levels at run time, as Vault's do.
 * POST `{level}` sets every logger, or one; DELETE goes back to the configured `log_level`.
 * Loggers: `core` (the server) and one per mount, named by its path (core/log-levels.ts).
 */
import { BadRequestError, NotFoundError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { LOG_LEVELS } from '../../config/config-values.js';
import type { SystemDeps } from '../services.js';

const LEVEL = {
  type: 'lowercase-string',
  description: 'trace, debug, info (notice), warn (warning) or error (err).',
  allowedValues: Object.keys(LOG_LEVELS),
} as const;

const NAME = { type: 'string', description: 'core, or a mount path without its trailing slash (transit, auth/cloud).' } as const;

export function loggerPaths(services: SystemDeps) {
  const levels = () => services.logLevels;
  const known = (name: string, missing: (message: string) => Error) => {
    if (!levels().has(name)) throw missing(`no logger named "${name}"; GET sys/loggers lists them`);
    return name;
  };
  return [
    definePath({
      pattern: 'loggers',
      fields: { level: LEVEL },
      sudo: true,
      operations: {
        read: { summary: 'Every logger and its level.', handler: async () => ({ data: levels().levels() }) },
        update: {
          summary: 'Set every logger to a level.',
          handler: async (_req, input) => {
            if (input.level === undefined) throw new BadRequestError('level is required');
            levels().setAll(LOG_LEVELS[input.level]!);
            return null;
          },
        },
        delete: {
          summary: 'Set every logger back to the configured level.',
          handler: async () => {
            levels().revert();
            return null;
          },
        },
      },
      synopsis: 'Log levels of every logger.',
      description: 'Levels are per node and last until the node restarts; DELETE returns to the configured log_level.',
    }),
    definePath({
      pattern: 'loggers/:name+',
      fields: { name: NAME, level: LEVEL },
      sudo: true,
      operations: {
        read: {
          summary: "One logger's level.",
          handler: async (_req, input) => {
            const name = known(input.name!, (m) => new NotFoundError(m));
            return { data: { [name]: levels().levels()[name] } };
          },
        },
        update: {
          summary: 'Set one logger to a level.',
          handler: async (_req, input) => {
            const name = known(input.name!, (m) => new BadRequestError(m));
            if (input.level === undefined) throw new BadRequestError('level is required');
            levels().set(name, LOG_LEVELS[input.level]!);
            return null;
          },
        },
        delete: {
          summary: 'Set one logger back to the configured level.',
          handler: async (_req, input) => {
            levels().revert(known(input.name!, (m) => new BadRequestError(m)));
            return null;
          },
        },
      },
      synopsis: "One logger's level.",
      description: 'core is the server itself and carries every mount logger without a level of its own; a mount logger is named by its path.',
    }),
  ];
}
