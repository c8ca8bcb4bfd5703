/**
 * `wrapping_key`: the mount's RSA-4096 public key that BYOK imports are wrapped for
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#get-wrapping-key). Generated on
 * first use and kept where Vault keeps it, as the key policy `import/wrapping-key`; key names
 * cannot contain `/`, so no keys/… path reaches it, and LIST keys leaves the `import/` folder out
 * (it holds no key a client could use).
 */
import { definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { KeyPolicy, newPolicySettings } from '../keys/key-policy.js';
import { KEY_TYPES } from '../keys/key-types.js';
import { formatPublicKey, generateVersion } from '../keys/key-version.js';

/** Policy name of the wrapping key. */
export const WRAPPING_KEY_NAME = 'import/wrapping-key';

/** The wrapping key, generated (once, under its lock) when `create` is set and it does not exist yet. */
export async function wrappingKey(ctx: TransitContext, create: true): Promise<KeyPolicy>;
export async function wrappingKey(ctx: TransitContext, create: false): Promise<KeyPolicy | undefined>;
export async function wrappingKey(ctx: TransitContext, create: boolean): Promise<KeyPolicy | undefined> {
  const existing = await ctx.keys.get(WRAPPING_KEY_NAME);
  if (existing || !create) return existing;
  return ctx.keys.withLock(WRAPPING_KEY_NAME, async () => {
    const raced = await ctx.keys.get(WRAPPING_KEY_NAME);
    if (raced) return raced;
    const info = KEY_TYPES['rsa-4096'];
    const settings = newPolicySettings({
      name: WRAPPING_KEY_NAME,
      type: info.name,
      derived: false,
      convergent: false,
      exportable: false,
      allowPlaintextBackup: false,
      keySize: 0,
      autoRotatePeriod: 0,
    });
    const first = await generateVersion(info, 1, ctx.clock.now(), { convergent: false });
    ctx.logger.info('generated the BYOK wrapping key');
    return ctx.keys.save(new KeyPolicy({ ...settings, latestVersion: 1 }, new Map([[1, first]])), [first]);
  });
}

export function wrappingKeyPath(ctx: TransitContext) {
  return definePath({
    pattern: 'wrapping_key',
    fields: {},
    operations: {
      read: {
        summary: 'Read the public key to wrap imported keys for.',
        handler: async () => {
          const policy = await wrappingKey(ctx, true);
          return { data: { public_key: formatPublicKey(policy.info, policy.versions.get(policy.settings.latestVersion)!) } };
        },
      },
    },
    synopsis: 'The RSA-4096 public key that key material for keys/:name/import must be wrapped for.',
    description:
      'Returns a PEM public key, generated on the first request and kept for the mount. Wrap an ephemeral AES-256 key with ' +
      'RSA-OAEP for it, and the key material with AES key wrap with padding (RFC 5649) under that AES key.',
  });
}
