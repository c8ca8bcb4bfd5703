/** `keys/` (LIST) and `keys/:name` (create, read, delete). */
import { BadRequestError, definePath, listResponse, type AnyPathDefinition } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { keyBody } from '../keys/format.js';
import { createKey } from '../keys/operations.js';
import { KEY_TYPE_NAMES } from '../keys/key-types.js';
import { decodeBase64 } from '../crypto/base64.js';

export function keysPaths(ctx: TransitContext): AnyPathDefinition[] {
  const list = definePath({
    pattern: 'keys/',
    fields: {},
    operations: { list: { summary: 'List key names.', handler: async () => listResponse(await ctx.keys.list()) } },
    synopsis: 'List the named keys.',
    description: 'Returns key names only.',
  });

  const key = definePath({
    pattern: 'keys/:name',
    fields: {
      name: { type: 'name', description: 'Name of the key.', required: true },
      type: {
        type: 'string',
        description: 'Type of the key; ml-kem (with parameter_set) and mlkem768-x25519 are key-encapsulation keys for encrypt and datakey (docs/transit-kem.md).',
        default: 'aes256-gcm96',
        allowedValues: [...KEY_TYPE_NAMES, 'managed_key'],
      },
      derived: { type: 'bool', description: 'Every encrypt/decrypt must supply a context the key is derived from.', default: false },
      convergent_encryption: {
        type: 'bool',
        description: 'The same plaintext and context give the same ciphertext (needs derived); the nonce is derived.',
        default: false,
      },
      exportable: { type: 'bool', description: 'Allows export of the key; cannot be turned off once set.', default: false },
      allow_plaintext_backup: { type: 'bool', description: 'Allows plaintext backups; cannot be turned off once set.', default: false },
      key_size: { type: 'int', description: 'hmac keys only: key size in bytes, 32 to 512 (default 32).', default: 0, minimum: 0 },
      auto_rotate_period: { type: 'duration', description: 'Rotate automatically after this long; 0 disables, otherwise at least 1h.', default: 0 },
      managed_key_name: { type: 'string', description: 'Managed keys are not available (no managed-key backend is configured).' },
      managed_key_id: { type: 'string', description: 'Managed keys are not available (no managed-key backend is configured).' },
      context: { type: 'string', description: 'Read only: base64 context, to show the derived public key of a derived ed25519 key.' },
      parameter_set: {
        type: 'string',
        description:
          'Required for ml-dsa (44, 65 or 87), hybrid (the ML-DSA set: 44, 65 or 87) and slh-dsa keys (slh-dsa-sha2-128s, ' +
          'slh-dsa-sha2-128f, slh-dsa-sha2-192s, slh-dsa-sha2-192f, slh-dsa-sha2-256s, slh-dsa-sha2-256f, and the same six with shake), ' +
          'and ml-kem keys (768, the default, or 1024: docs/transit-kem.md); refused for every other type.',
      },
      hybrid_key_type_pqc: { type: 'string', description: 'hybrid keys: the post-quantum half, ml-dsa.' },
      hybrid_key_type_ec: {
        type: 'string',
        description:
          'hybrid keys: the elliptic-curve half, one of the IETF composite draft\'s pairs: ed25519 or ecdsa-p256 with 44; ecdsa-p256, ' +
          'ecdsa-p384 or ed25519 with 65; ecdsa-p384 or ecdsa-p521 with 87.',
      },
    },
    operations: {
      update: {
        summary: 'Create a key.',
        handler: async (_req, input) => {
          if (input.type === 'managed_key' || input.managed_key_name || input.managed_key_id) {
            throw new BadRequestError('managed keys are not available: no managed-key backend is configured');
          }
          const { policy, existed } = await createKey(ctx, input.name, {
            type: input.type,
            derived: input.derived,
            convergent: input.convergent_encryption,
            exportable: input.exportable,
            allowPlaintextBackup: input.allow_plaintext_backup,
            keySize: input.key_size,
            autoRotatePeriod: input.auto_rotate_period,
            parameterSet: input.parameter_set,
            hybridPqc: input.hybrid_key_type_pqc,
            hybridEc: input.hybrid_key_type_ec,
          });
          return { data: keyBody(policy), ...(existed ? { warnings: [`key ${input.name} already existed`] } : {}) };
        },
      },
      read: {
        summary: 'Read a key.',
        handler: async (_req, input) => {
          const policy = await ctx.keys.get(input.name);
          if (!policy) return null;
          return { data: keyBody(policy, input.context ? decodeBase64(input.context, 'context') : undefined) };
        },
      },
      delete: {
        summary: 'Delete a key (needs deletion_allowed).',
        handler: async (_req, input) => {
          await ctx.keys.withLock(input.name, async () => {
            const policy = await ctx.keys.get(input.name);
            if (!policy) throw new BadRequestError(`error deleting policy ${input.name}: could not delete key; not found`);
            if (!policy.settings.deletionAllowed) throw new BadRequestError(`error deleting policy ${input.name}: deletion is not allowed for this key`);
            await ctx.keys.delete(input.name);
          });
          return null;
        },
      },
    },
    synopsis: 'Create, read or delete a named key.',
    description:
      'POST creates the key with version 1 (an existing key is returned unchanged, with a warning). GET returns its settings, ' +
      'versions and public keys, never private material. DELETE needs deletion_allowed set through keys/:name/config.',
  });
  return [list, key];
}
