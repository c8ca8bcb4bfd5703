/**
 * `sys/config/cors`: read, set and turn off the CORS setting the HTTP layer applies
 * (core/http/cors.ts; https://developer.hashicorp.com/vault/api-docs/system/config-cors).
 * Root-protected (sudo), as in Vault.
 */
import { definePath } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function configCorsPath(services: SystemDeps) {
  return definePath({
    pattern: 'config/cors',
    fields: {
      enabled: { type: 'bool', description: 'Whether CORS answers are given; false turns CORS off.', default: true },
      allowed_origins: { type: 'comma-string-list', description: 'Origins allowed to make cross-origin requests, or "*" alone for every origin.' },
      allowed_headers: { type: 'comma-string-list', description: 'Headers allowed in cross-origin requests, besides the standard ones Vault allows.' },
    },
    sudo: true,
    operations: {
      read: {
        summary: 'Read the CORS setting.',
        handler: async () => {
          const config = await services.cors.get();
          return {
            data: {
              enabled: config.enabled,
              ...(config.enabled ? { allowed_origins: config.allowedOrigins, allowed_headers: config.allowedHeaders } : {}),
            },
          };
        },
      },
      update: {
        summary: 'Set the CORS setting.',
        handler: async (_req, input) => {
          await services.cors.set(input.enabled, input.allowed_origins ?? [], input.allowed_headers ?? []);
          return null;
        },
      },
      delete: {
        summary: 'Turn CORS off.',
        handler: async () => {
          await services.cors.disable();
          return null;
        },
      },
    },
    synopsis: 'Cross-origin requests (CORS).',
    description:
      'With CORS on, a request whose Origin is allowed gets Access-Control-Allow-Origin and Vary: Origin, a preflight ' +
      'OPTIONS is answered 204 with the allowed methods and headers, and a request from any other origin is refused ' +
      '403. The setting is stored behind the barrier and applies on every node of a cluster.',
  });
}
