/**
 * `backup/:name`: a plaintext backup of a key in Vault's format
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#backup-key; docs/transit.md,
 * "Export, backup and bring your own key"). Needs exportable and allow_plaintext_backup, as in
 * Vault; records backup_info on the key first.
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { encodeBackup } from '../keys/backup-format.js';

export function backupPath(ctx: TransitContext) {
  return definePath({
    pattern: 'backup/:name',
    fields: { name: { type: 'name', description: 'Name of the key.', required: true } },
    operations: {
      read: {
        summary: 'Back up a key.',
        handler: async (_req, input) => {
          const backup = await ctx.keys.withLock(input.name, async () => {
            const policy = await ctx.keys.get(input.name);
            if (!policy) throw new BadRequestError(`key "${input.name}" not found`);
            if (!policy.settings.exportable) throw new BadRequestError('exporting is disallowed on the policy: a backup needs exportable set');
            if (!policy.settings.allowPlaintextBackup) throw new BadRequestError('plaintext backup is disallowed on the policy: a backup needs allow_plaintext_backup set');
            const now = ctx.clock.now();
            const saved = await ctx.keys.save(policy.with({ backupInfo: { time: now.toISOString(), version: policy.settings.latestVersion } }));
            return encodeBackup(saved);
          });
          return { data: { backup } };
        },
      },
    },
    synopsis: 'Back up a named key in plaintext.',
    description:
      'Returns every version (key material, HMAC keys, certificate chains) and the settings of the key as a base64 JSON blob in ' +
      "Vault's format, for restore here or in Vault. The key must have exportable and allow_plaintext_backup set.",
  });
}
