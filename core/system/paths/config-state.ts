/** `sys/config/state/sanitized`: the configuration this node runs with, without its secrets. */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function configStatePath(services: SystemDeps) {
  return definePath({
    pattern: 'config/state/sanitized',
    fields: {},
    sudo: true,
    operations: {
      read: {
        summary: 'The configuration in effect, without secrets.',
        handler: async () => ({ data: services.configState() }),
      },
    },
    synopsis: "This node's configuration, sanitized.",
    description:
      'The settings read from the configuration files (or dev mode) and their defaults, with every secret left out: the ' +
      'PostgreSQL connection URL is never shown, only the kind of storage and its non-secret settings. Needs sudo.',
  });
}
