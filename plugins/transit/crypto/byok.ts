/**
 * BYOK wrapping (docs/transit.md, "Export, backup and bring your own key"), the same as PKCS#11
 * CKM_RSA_AES_KEY_WRAP: a fresh 256-bit AES key encrypted with RSA-OAEP for the receiver's RSA key,
 * followed by the key material wrapped under that AES key with AES key wrap with padding
 * (RFC 5649). Vault's import reads the first 512 bytes as the RSA part (its wrapping key is
 * RSA-4096); a blob wrapped for a smaller RSA key has a shorter RSA part, as Vault's byok-export
 * also produces.
 */
import { constants, createCipheriv, createDecipheriv, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { BadRequestError } from '../../../sdk/index.js';

/** Length of the RSA-OAEP part of an import ciphertext: the first 512 bytes (https://developer.hashicorp.com/vault/api-docs/secret/transit#import-key). */
export const WRAPPED_AES_KEY_BYTES = 512;

/** RFC 5649's alternative initial value; node's wrap-pad ciphers take it as their 4-byte IV. */
const KWP_IV = Buffer.from('a65959a6', 'hex');

const OAEP_HASHES = { SHA1: 'sha1', SHA224: 'sha224', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512' } as const;

export type OaepHash = (typeof OAEP_HASHES)[keyof typeof OAEP_HASHES];

/** `hash_function` / `hash` (case-insensitive): SHA1, SHA224, SHA256, SHA384 or SHA512. */
export function parseOaepHash(name: string): OaepHash {
  const hash = (OAEP_HASHES as Record<string, OaepHash | undefined>)[name.toUpperCase()];
  if (!hash) throw new BadRequestError(`unknown hash function: ${name} (use SHA1, SHA224, SHA256, SHA384 or SHA512)`);
  return hash;
}

/** Wraps key material for the holder of `rsaPublicKey`; returns the raw blob (callers base64 it). */
export function wrapKeyMaterial(rsaPublicKey: KeyObject, material: Uint8Array, hash: OaepHash): Buffer {
  const aesKey = randomBytes(32);
  try {
    const wrappedAesKey = publicEncrypt({ key: rsaPublicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, aesKey);
    const kwp = createCipheriv('id-aes256-wrap-pad', aesKey, KWP_IV);
    return Buffer.concat([wrappedAesKey, kwp.update(material), kwp.final()]);
  } finally {
    aesKey.fill(0);
  }
}

/**
 * Unwraps an import ciphertext with the wrapping key. Every failure is the caller's: a truncated
 * blob, the wrong hash_function, a blob wrapped for another key, or a corrupted key-wrap part.
 */
export function unwrapKeyMaterial(rsaPrivateKey: KeyObject, blob: Uint8Array, hash: OaepHash): Buffer {
  if (blob.length <= WRAPPED_AES_KEY_BYTES) {
    throw new BadRequestError(
      `provided ciphertext is too short: ${blob.length} bytes, expected the ${WRAPPED_AES_KEY_BYTES}-byte wrapped AES key followed by the wrapped key material`,
    );
  }
  let aesKey: Buffer;
  try {
    aesKey = privateDecrypt(
      { key: rsaPrivateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash },
      blob.subarray(0, WRAPPED_AES_KEY_BYTES),
    );
  } catch {
    throw new BadRequestError(
      'failed to decrypt the ephemeral AES key: the ciphertext was not wrapped for this mount\'s wrapping key with RSA-OAEP and the given hash_function, or it is corrupt',
    );
  }
  try {
    if (aesKey.length !== 32) throw new BadRequestError('expected ephemeral AES key to be 256-bit');
    const kwp = createDecipheriv('id-aes256-wrap-pad', aesKey, KWP_IV);
    try {
      return Buffer.concat([kwp.update(blob.subarray(WRAPPED_AES_KEY_BYTES)), kwp.final()]);
    } catch {
      throw new BadRequestError('failed to unwrap the key material: the AES key wrap (RFC 5649) part of the ciphertext is corrupt');
    }
  } finally {
    aesKey.fill(0);
  }
}
