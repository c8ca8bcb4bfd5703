/**
 * `restore(/:name)`: a key from a backup blob — ours or Vault's
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#restore-key; the blob:
 * docs/transit.md, "Export, backup and bring your own key"). Under the blob's name or a new one;
 * over an existing key only with `force`, replacing all its versions. Records restore_info. The
 * blob is read completely before anything is written.
 */
import { BadRequestError, CoercionError, coerceField, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { decodeBackup } from '../keys/backup-format.js';
import { publicKeyOfPrivate } from '../keys/key-consistency.js';
import type { KeyPolicy } from '../keys/key-policy.js';

export function restorePath(ctx: TransitContext) {
  return definePath({
    pattern: 'restore/:name?',
    fields: {
      name: { type: 'string', description: 'Name to restore the key under; the name in the backup when omitted.' },
      backup: { type: 'string', description: 'The backup blob, as backup/:name returns it.', sensitive: true },
      force: { type: 'bool', description: 'Restore over an existing key of that name, replacing it.', default: false },
    },
    operations: {
      update: {
        summary: 'Restore a key from a backup.',
        handler: async (_req, input) => {
          if (!input.backup) throw new BadRequestError("'backup' must be supplied");
          const restored = decodeBackup(input.backup);
          await checkPrivateKeys(restored);
          const name = checkedName(input.name || restored.name);
          await ctx.keys.withLock(name, async () => {
            if ((await ctx.keys.get(name)) && !input.force) {
              throw new BadRequestError(`key "${name}" already exists; set force to restore over it`);
            }
            const now = ctx.clock.now();
            await ctx.keys.replace(restored.with({ name, restoreInfo: { time: now.toISOString(), version: restored.settings.latestVersion } }));
          });
          return null;
        },
      },
    },
    synopsis: 'Restore a key from a backup.',
    description:
      'Takes the output of backup/:name (from this service or from Vault) and writes the key with all its versions under its ' +
      'own name or the one given. Refused for an existing key unless force is set.',
  });
}

/**
 * A backup's private keys pass the checks an imported key does: a blob is key material from
 * outside like any other, and an RSA key whose d or CRT values are off still signs here (OpenSSL
 * uses whichever of the two is right) but fails wherever it is exported to.
 */
async function checkPrivateKeys(policy: KeyPolicy): Promise<void> {
  for (const version of policy.versions.values()) {
    if (version.privateKey) await publicKeyOfPrivate(policy.info, version.privateKey, `key version ${version.version}`);
  }
}

function checkedName(name: string): string {
  if (name === '') throw new BadRequestError('the backup has no key name; give one in the path or the name field');
  if (name.includes('/')) throw new BadRequestError('key names cannot be paths');
  try {
    coerceField({ type: 'name', description: 'key name' }, name);
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`invalid key name "${name}": ${err.message}`);
    throw err;
  }
  return name;
}
