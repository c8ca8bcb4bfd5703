/**
 * `datakey/:type/:name`: a fresh random data key, encrypted with the named key and returned with
 * (`plaintext`) or without (`wrapped`) its plaintext
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#generate-data-key). The two paths
 * are separate so that policies can say who may see data keys in the clear.
 */
import { randomBytes } from 'node:crypto';
import { BadRequestError, InternalError, definePath, type FieldValues, type LogicalResponse } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { decodeBase64, encodeBase64 } from '../crypto/base64.js';
import { ItemError, logItemFailures } from '../crypto/item-error.js';
import { checkAssociatedData, paddingScheme } from '../crypto/items.js';
import { RSA_PADDING_SCHEMES, NONCE_NOT_ALLOWED, encryptBatch, nonceAllowed } from '../crypto/cipher.js';

const DATAKEY_FIELDS = {
  type: {
    type: 'string',
    description: '"plaintext" returns the data key in plaintext and encrypted; "wrapped" returns it encrypted only.',
    required: true,
  },
  name: { type: 'name', description: 'Name of the key that encrypts the data key.', required: true },
  context: { type: 'string', description: 'Base64 context the key is derived from; required for derived keys. For ml-kem and mlkem768-x25519 keys it is the HPKE info, needed again to decrypt; ignored by others.' },
  associated_data: {
    type: 'string',
    description: 'Base64 associated data the data key is sealed with, as encrypt does: decrypt needs it again. AEAD key types only (AES-GCM, ChaCha20-Poly1305, and the HPKE AEAD of ml-kem and mlkem768-x25519 keys).',
  },
  nonce: { type: 'string', description: 'Base64 12-byte nonce, for convergent keys made by Vault 0.6.1 only (convergent version 1); refused for other keys.' },
  bits: { type: 'int', description: 'Length of the data key in bits: 128, 256 (the default) or 512.', default: 256 },
  key_version: { type: 'int', description: 'Version to encrypt the data key with: 0 is the latest; otherwise at least min_encryption_version.', default: 0 },
  padding_scheme: { type: 'string', description: 'RSA keys only: oaep (the default; SHA-256, MGF1-SHA-256) or pkcs1v15.', allowedValues: RSA_PADDING_SCHEMES },
} as const;

type DatakeyInput = FieldValues<typeof DATAKEY_FIELDS>;

const DATA_KEY_BITS = [128, 256, 512];

export function datakeyPath(ctx: TransitContext) {
  return definePath({
    pattern: 'datakey/:type/:name',
    fields: DATAKEY_FIELDS,
    operations: { update: { summary: 'Generate a data key.', handler: (_req, input) => datakey(ctx, input) } },
    synopsis: DATAKEY_SYNOPSIS,
    description: DATAKEY_DESCRIPTION,
  });
}

async function datakey(ctx: TransitContext, input: DatakeyInput): Promise<LogicalResponse> {
  if (input.type !== 'plaintext' && input.type !== 'wrapped') throw new BadRequestError("Invalid path, must be 'plaintext' or 'wrapped'");
  const context = input.context === undefined ? undefined : decodeBase64(input.context, 'context');
  const nonce = input.nonce === undefined ? undefined : decodeBase64(input.nonce, 'nonce');
  const aad = input.associated_data === undefined ? undefined : decodeBase64(input.associated_data, 'associated_data');
  if (!DATA_KEY_BITS.includes(input.bits)) throw new BadRequestError('invalid bit length');

  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('encryption key not found');
  const padding = paddingScheme(input.padding_scheme, policy.info, 'padding_scheme');
  if (nonce !== undefined && !nonceAllowed(policy)) throw new BadRequestError(NONCE_NOT_ALLOWED);
  checkAssociatedData(aad, policy.info, 0);

  const key = randomBytes(input.bits / 8);
  try {
    const results = encryptBatch(ctx.wasm, policy, [{ plaintext: key, context, nonce, aad, keyVersion: input.key_version, padding }]);
    logItemFailures(ctx.logger, policy.name, results);
    const sealed = results[0]!;
    if (sealed instanceof ItemError) throw sealed.internal ? new InternalError(sealed.message) : new BadRequestError(sealed.message);
    const data: Record<string, unknown> = { ciphertext: sealed.ciphertext, key_version: sealed.keyVersion };
    if (input.type === 'plaintext') data.plaintext = encodeBase64(key);
    return { data };
  } finally {
    key.fill(0);
  }
}

const DATAKEY_SYNOPSIS = 'Generate a data key encrypted with a named key.';
const DATAKEY_DESCRIPTION = `
Generates a random data key of 128, 256 (default) or 512 bits and encrypts it with the named key,
like encrypt would, sealed with associated_data when given (decrypt then needs the same value).
datakey/plaintext/:name returns the base64 data key with its ciphertext, for immediate use;
datakey/wrapped/:name returns the ciphertext only, to be decrypted later through decrypt. The
ciphertext and the key version are returned either way.`;
