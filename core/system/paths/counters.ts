/**
 * `sys/internal/counters/tokens` and `entities`: how many service tokens and identity entities
 * exist, in Vault's shape (https://developer.hashicorp.com/vault/api-docs/system/internal-counters).
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { SystemDeps } from '../services.js';

export function counterPaths(services: SystemDeps): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'internal/counters/tokens',
      fields: {},
      operations: {
        read: {
          summary: 'Count the service tokens.',
          handler: async () => ({ data: { counters: { service_tokens: { total: await services.authz.tokens.countStored() } } } }),
        },
      },
      synopsis: 'How many service tokens exist.',
      description: 'Every stored service token (batch tokens are not stored, so not counted), as Vault counts them.',
    }),
    definePath({
      pattern: 'internal/counters/entities',
      fields: {},
      operations: {
        read: {
          summary: 'Count the identity entities.',
          handler: async () => ({ data: { counters: { entities: { total: (await services.identity.listEntities()).length } } } }),
        },
      },
      synopsis: 'How many identity entities exist.',
      description: 'Every entity of the identity store.',
    }),
  ];
}
