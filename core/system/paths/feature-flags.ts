/**
 * `sys/experiments` and `sys/internal/ui/feature-flags`: Vault's lists of experimental features
 * and UI feature flags. Keywarden has neither, and says so in Vault's shape.
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';

export function featureFlagPaths(): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'experiments',
      fields: {},
      operations: { read: { summary: 'List the experimental features.', handler: async () => ({ data: { available: [], enabled: [] } }) } },
      synopsis: 'The experimental features: none.',
      description: 'Vault lists the experiments a server can turn on; Keywarden has none.',
    }),
    definePath({
      pattern: 'internal/ui/feature-flags',
      fields: {},
      unauthenticated: true,
      operations: { read: { summary: 'List the UI feature flags.', handler: async () => ({ raw: { status: 200, body: { feature_flags: [] } } }) } },
      synopsis: 'The UI feature flags: none.',
      description: 'Vault\'s UI reads the flags its server sets (VAULT_UI_FEATURE_FLAGS); Keywarden sets none.',
    }),
  ];
}
