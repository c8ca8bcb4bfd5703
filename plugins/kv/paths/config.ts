/** `config`: the mount-wide settings of a version 2 mount (max_versions, cas_required, delete_version_after). */
import { definePath, goDuration } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';

export function configPath(ctx: KvContext) {
  return definePath({
    pattern: 'config',
    fields: {
      max_versions: { type: 'int', description: 'How many versions each key keeps; 0: the default, 10.', minimum: 0 },
      cas_required: { type: 'bool', description: 'Refuse writes without the check-and-set option on every key.' },
      delete_version_after: { type: 'duration', description: 'How long after its write each new version is deleted; 0: never.' },
    },
    operations: {
      read: {
        summary: "Read the mount's settings.",
        handler: async () => {
          const config = await ctx.config.get();
          return { data: { cas_required: config.casRequired, delete_version_after: goDuration(config.deleteVersionAfter), max_versions: config.maxVersions } };
        },
      },
      update: {
        summary: "Change the mount's settings.",
        handler: async (_req, input) => {
          const config = await ctx.config.get();
          const next = {
            maxVersions: input.max_versions ?? config.maxVersions,
            casRequired: input.cas_required ?? config.casRequired,
            deleteVersionAfter: input.delete_version_after ?? config.deleteVersionAfter,
          };
          await ctx.config.put(next);
          return null;
        },
      },
    },
    synopsis: 'Configure the version 2 key/value store.',
    description: 'A write changes only the settings it names. Settings on a key (metadata/) take precedence where they are stricter.',
  });
}
