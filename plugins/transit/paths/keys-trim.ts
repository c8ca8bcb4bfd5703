/** `keys/:name/trim`: permanently delete old versions (https://developer.hashicorp.com/vault/api-docs/secret/transit#trim-key; docs/transit.md, "Keys and their one-way settings"). */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { keyBody } from '../keys/format.js';

export function keysTrimPath(ctx: TransitContext) {
  return definePath({
    pattern: 'keys/:name/trim',
    fields: {
      name: { type: 'name', description: 'Name of the key.', required: true },
      min_available_version: { type: 'int', description: 'Versions below this one are deleted for good.', required: true },
    },
    operations: {
      update: {
        summary: 'Trim old versions.',
        handler: async (_req, input) => {
          const policy = await ctx.keys.withLock(input.name, async () => {
            const current = await ctx.keys.get(input.name);
            if (!current) throw new BadRequestError('invalid key name');
            const s = current.settings;
            const target = input.min_available_version;
            if (target <= 0) throw new BadRequestError('minimum available version should be positive');
            if (target < s.minAvailableVersion) throw new BadRequestError('minimum available version cannot be decremented');
            if (s.minEncryptionVersion === 0) throw new BadRequestError('minimum available version cannot be set when minimum encryption version is not set');
            if (s.minDecryptionVersion === 0) throw new BadRequestError('minimum available version cannot be set when minimum decryption version is not set');
            if (target > s.minEncryptionVersion) throw new BadRequestError('minimum available version cannot be greater than minimum encryption version');
            if (target > s.minDecryptionVersion) throw new BadRequestError('minimum available version cannot be greater than minimum decryption version');
            const removed = [...current.versions.keys()].filter((v) => v < target);
            const versions = new Map([...current.versions].filter(([v]) => v >= target));
            return ctx.keys.save(current.with({ minAvailableVersion: target }, versions), [], removed);
          });
          return { data: keyBody(policy) };
        },
      },
    },
    synopsis: 'Delete old key versions.',
    description:
      'Only when min_encryption_version and min_decryption_version are both set; min_available_version may not exceed either, ' +
      'and it never goes down.',
  });
}
