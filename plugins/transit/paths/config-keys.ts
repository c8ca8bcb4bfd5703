/** `config/keys`: engine-wide key settings (disable_upsert). */
import { definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';

/** Storage key of the engine-wide settings. */
export const CONFIG_KEYS = 'config/keys';

export async function readKeysConfig(ctx: TransitContext): Promise<{ disable_upsert: boolean }> {
  const raw = await ctx.storage.get(CONFIG_KEYS);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as { disable_upsert: boolean }) : { disable_upsert: false };
}

export function configKeysPath(ctx: TransitContext) {
  return definePath({
    pattern: 'config/keys',
    fields: { disable_upsert: { type: 'bool', description: 'When true, encrypt no longer creates missing keys.' } },
    operations: {
      read: { summary: 'Read the engine-wide key settings.', handler: async () => ({ data: await readKeysConfig(ctx) }) },
      update: {
        summary: 'Change the engine-wide key settings.',
        handler: async (_req, input) => {
          const next = { ...(await readKeysConfig(ctx)), ...(input.disable_upsert !== undefined ? { disable_upsert: input.disable_upsert } : {}) };
          await ctx.storage.put(CONFIG_KEYS, Buffer.from(JSON.stringify(next)));
          return { data: next };
        },
      },
    },
    synopsis: 'Engine-wide key configuration.',
    description: 'disable_upsert: encrypt on a missing key is an error even with the create capability.',
  });
}
