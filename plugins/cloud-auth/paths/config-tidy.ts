/**
 * `config/tidy/identity-accesslist` and `config/tidy/roletag-denylist`, and their pre-1.7 names
 * `config/tidy/identity-whitelist` and `config/tidy/roletag-blacklist`, which answer the same.
 */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { writeJson } from '../storage.js';
import { DEFAULT_SAFETY_BUFFER, readTidyConfig, tidyConfigKey, type TidyConfig, type TidyList } from '../tidy-config.js';

const NAMES: Record<TidyList, { current: string; deprecated: string; entries: string }> = {
  accesslist: { current: 'identity-accesslist', deprecated: 'identity-whitelist', entries: 'identity access-list' },
  denylist: { current: 'roletag-denylist', deprecated: 'roletag-blacklist', entries: 'role-tag deny-list' },
};

export function configTidyPaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  return (['accesslist', 'denylist'] as const).flatMap((list) => [tidyPath(ctx, list, NAMES[list].current), tidyPath(ctx, list, NAMES[list].deprecated)]);
}

function tidyPath(ctx: CloudAuthContext, list: TidyList, name: string): AnyPathDefinition {
  return definePath({
    pattern: `config/tidy/${name}`,
    fields: {
      safety_buffer: { type: 'duration', description: 'Time past expiry before an entry is removed (default 72h).' },
      disable_periodic_tidy: { type: 'bool', description: 'Turn off the periodic tidy of these entries.' },
    },
    existenceCheck: async () => (await readTidyConfig(ctx.storage, list)) !== undefined,
    operations: {
      read: {
        summary: 'Read the tidy settings.',
        handler: async () => {
          const config = await readTidyConfig(ctx.storage, list);
          return config ? { data: { safety_buffer: config.safety_buffer, disable_periodic_tidy: config.disable_periodic_tidy } } : null;
        },
      },
      create: { summary: 'Write the tidy settings.', handler: (_req, input) => write(input) },
      update: { summary: 'Update the tidy settings; fields not sent keep their values.', handler: (_req, input) => write(input) },
      delete: {
        summary: 'Delete the tidy settings (back to the defaults).',
        handler: async () => {
          await ctx.storage.delete(tidyConfigKey(list));
          return null;
        },
      },
    },
    synopsis: `Configure the periodic tidy of ${NAMES[list].entries} entries.`,
    description: `safety_buffer (default 72h) is how long after expiry an entry is kept; disable_periodic_tidy turns the periodic tidy off.` +
      (name === NAMES[list].deprecated ? ` Deprecated name of config/tidy/${NAMES[list].current}.` : ''),
  });

  async function write(input: { safety_buffer?: number | undefined; disable_periodic_tidy?: boolean | undefined }) {
    const current: TidyConfig = (await readTidyConfig(ctx.storage, list)) ?? { safety_buffer: DEFAULT_SAFETY_BUFFER, disable_periodic_tidy: false };
    const next: TidyConfig = {
      safety_buffer: input.safety_buffer ?? current.safety_buffer,
      disable_periodic_tidy: input.disable_periodic_tidy ?? current.disable_periodic_tidy,
    };
    await writeJson(ctx.storage, tidyConfigKey(list), next);
    return null;
  }
}
