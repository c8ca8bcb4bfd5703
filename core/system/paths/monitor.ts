/**
 * `sys/monitor` (https://developer.hashicorp.com/vault/api-docs/system/monitor): this node's log
 * lines at `log_level` and above, in `log_format` (standard or json), streamed as chunked text
 * until the client goes away, the node seals or the server shuts down. Sudo, as in Vault. What it
 * streams and how a slow reader is bounded: core/log-tap.ts and docs/metrics.md.
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { LOG_LEVELS } from '../../config/config-values.js';
import type { SystemDeps } from '../services.js';

const FORMATS = ['standard', 'json'] as const;

export function monitorPath(services: SystemDeps) {
  return definePath({
    pattern: 'monitor',
    fields: {
      log_level: { type: 'string', description: 'trace, debug, info, warn or error; info when unset.' },
      log_format: { type: 'string', description: 'standard (hclog text lines) or json; standard when unset.' },
    },
    sudo: true,
    operations: {
      read: {
        summary: "Stream this node's log lines.",
        handler: async (_req, input) => {
          const levelName = (input.log_level ?? '').trim().toLowerCase() || 'info';
          const level = LOG_LEVELS[levelName];
          if (!level) throw new BadRequestError(`unknown log level "${input.log_level}": log_level must be trace, debug, info, warn or error`);
          const format = (input.log_format ?? '').trim().toLowerCase() || 'standard';
          if (!(FORMATS as readonly string[]).includes(format)) throw new BadRequestError(`unknown log format "${input.log_format}": log_format must be standard or json`);
          const tap = services.logTap;
          if (!tap) throw new BadRequestError('this server was started with a logger of the embedding program, whose lines sys/monitor cannot see');
          return { raw: { status: 200, binary: tap.monitor(level, format as (typeof FORMATS)[number]), contentType: 'text/plain; charset=utf-8' } };
        },
      },
    },
    synopsis: "Stream this node's log lines.",
    description:
      'The lines this node writes to its log, at log_level and above, as standard text or JSON lines, until the client ' +
      'disconnects. A reader that falls behind by more lines than the buffer holds gets "Monitor dropped N logs during ' +
      'monitor request" in place of the lines dropped.',
  });
}
