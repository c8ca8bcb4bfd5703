/**
 * `keys/:name/config`: the tunable settings of a key
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#update-key-configuration;
 * docs/transit.md, "Keys and their one-way settings").
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { keyBody } from '../keys/format.js';
import { checkAutoRotatePeriod } from '../keys/key-policy.js';

export function keysConfigPath(ctx: TransitContext) {
  return definePath({
    pattern: 'keys/:name/config',
    fields: {
      name: { type: 'name', description: 'Name of the key.', required: true },
      min_decryption_version: { type: 'int', description: 'Lowest version that may decrypt or verify.' },
      min_encryption_version: { type: 'int', description: 'Lowest version that may encrypt, sign or HMAC; 0 is the latest.' },
      deletion_allowed: { type: 'bool', description: 'Whether the key may be deleted.' },
      exportable: { type: 'bool', description: 'Allow export; once true it stays true (false is then refused).' },
      allow_plaintext_backup: { type: 'bool', description: 'Allow plaintext backups; once true it stays true (false is then refused).' },
      auto_rotate_period: { type: 'duration', description: 'Automatic rotation period; 0 disables, otherwise at least 1h; unchanged when omitted.' },
    },
    operations: {
      update: {
        summary: 'Change the settings of a key.',
        handler: async (_req, input) => {
          const warnings: string[] = [];
          const policy = await ctx.keys.withLock(input.name, async () => {
            const current = await ctx.keys.get(input.name);
            if (!current) throw new BadRequestError(`no existing key named ${input.name} could be found`);
            const s = current.settings;
            let minDec = s.minDecryptionVersion;
            let minEnc = s.minEncryptionVersion;
            if (input.min_decryption_version !== undefined) {
              if (input.min_decryption_version < 0) throw new BadRequestError('min decryption version cannot be negative');
              minDec = input.min_decryption_version;
              if (minDec === 0) {
                minDec = 1;
                warnings.push('since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1');
              }
              if (minDec > s.latestVersion) {
                throw new BadRequestError(`cannot set min decryption version of ${minDec}, latest key version is ${s.latestVersion}`);
              }
              if (minDec < s.minAvailableVersion) throw new BadRequestError('min decryption version should not be less than min available version');
            }
            if (input.min_encryption_version !== undefined) {
              if (input.min_encryption_version < 0) throw new BadRequestError('min encryption version cannot be negative');
              minEnc = input.min_encryption_version;
              if (minEnc > s.latestVersion) {
                throw new BadRequestError(`cannot set min encryption version of ${minEnc}, latest key version is ${s.latestVersion}`);
              }
              if (minEnc > 0 && minEnc < s.minAvailableVersion) throw new BadRequestError('min encryption version should not be less than min available version');
            }
            if (minEnc > 0 && minEnc < minDec) {
              throw new BadRequestError(
                `cannot set min encryption/decryption values; min encryption version of ${minEnc} must be greater than or equal to min decryption version of ${minDec}`,
              );
            }
            if (input.auto_rotate_period !== undefined) checkAutoRotatePeriod(input.auto_rotate_period);
            // One-way switches: asking to turn one off is refused, not ignored as Vault does (docs/transit.md).
            if (input.exportable === false && s.exportable) throw new BadRequestError('exportable is set on this key and cannot be turned off');
            if (input.allow_plaintext_backup === false && s.allowPlaintextBackup) {
              throw new BadRequestError('allow_plaintext_backup is set on this key and cannot be turned off');
            }
            const next = current.with({
              minDecryptionVersion: minDec,
              minEncryptionVersion: minEnc,
              deletionAllowed: input.deletion_allowed ?? s.deletionAllowed,
              exportable: s.exportable || (input.exportable ?? false),
              allowPlaintextBackup: s.allowPlaintextBackup || (input.allow_plaintext_backup ?? false),
              autoRotatePeriod: input.auto_rotate_period ?? s.autoRotatePeriod,
            });
            return ctx.keys.save(next);
          });
          return { data: keyBody(policy), ...(warnings.length ? { warnings } : {}) };
        },
      },
    },
    synopsis: 'Configure a named key.',
    description:
      'min_encryption_version must be 0 or at least min_decryption_version; exportable and allow_plaintext_backup cannot be ' +
      'turned off once on; auto_rotate_period is 0 or at least an hour.',
  });
}
